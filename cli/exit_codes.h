// nmprof's own exit codes; otherwise `nmprof run` exits with its command's status.
// The 126/127 convention is the shell's (and env's, timeout's).
#pragma once

#include <iostream>
#include <string>

#include "formats/text/utf8.h"

namespace nmprof::cli {

constexpr int kExitFailure = 1;     // nmprof could not do its job (e.g. output not writable)
constexpr int kExitUsage = 2;       // bad command line
constexpr int kExitGate = 3;        // a --fail-on-live or --fail-on-growth limit was passed
constexpr int kExitUndecided = 4;   // too few samples to tell whether such a limit was passed
constexpr int kExitCannotRun = 126; // the command exists but cannot be run or profiled
constexpr int kExitNotFound = 127;  // the command does not exist

// Says `message` on stderr as nmprof's one line and returns `code`. Messages carry
// paths as the user typed them and what a target said (its comm, a dlerror text):
// never a control character or a line of their own.
inline int fail(int code, const std::string& message) {
  std::cerr << "nmprof: " << text::escape_controls(message) << "\n";
  return code;
}

}  // namespace nmprof::cli
