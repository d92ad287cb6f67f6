// nmprof's own exit codes; otherwise `nmprof run` exits with its command's status.
// The 126/127 convention is the shell's (and env's, timeout's).
#pragma once

namespace nmprof::cli {

constexpr int kExitFailure = 1;     // nmprof could not do its job (e.g. output not writable)
constexpr int kExitUsage = 2;       // bad command line
constexpr int kExitGate = 3;        // a --fail-on-live or --fail-on-growth limit was passed
constexpr int kExitCannotRun = 126; // the command exists but cannot be run or profiled
constexpr int kExitNotFound = 127;  // the command does not exist

}  // namespace nmprof::cli
