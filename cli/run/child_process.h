// Runs the profiled command as a child with inherited stdin/stdout/stderr and a
// modified environment, forwarding the signals that someone sends to nmprof
// (profile_signals.h).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cli/run/profile_signals.h"

namespace nmprof::cli {

using Environment = std::vector<std::pair<std::string, std::string>>;

// nmprof's environment with `overrides` set, as "NAME=VALUE" strings.
std::vector<std::string> environment_with(const Environment& overrides);
// Pointers to `strings`, null-terminated, as exec takes them.
std::vector<char*> pointers_to(std::vector<std::string>& strings);

struct ChildExit {
  int status = 0;   // what nmprof should exit with: the exit code, or 128 + signal
  int signal = 0;   // the signal that killed the child, 0 if it exited
  long pid = 0;
};

// Runs `path` with `argv` (argv[0] as the user typed it) to its end; `started`, when
// given, is told its pid once it runs. Returns false with *error if it could not be
// started.
bool run_child(const std::string& path, const std::vector<std::string>& argv, const Environment& overrides,
               ProfileSignals& signals, ChildExit* result, std::string* error,
               const std::function<void(long pid)>& started = {});

}  // namespace nmprof::cli
