// Before a recording starts, its output must be known to be writable: a run that
// cannot be saved is wasted.
#pragma once

#include <string>

namespace nmprof::cli {

// The widest pid (pid_max is at most 2^22): %p expanded with it gives the longest name.
constexpr long kWidestPid = 9999999;

// False with a one-line *error when `output` (expanded) cannot be created or
// replaced by the invoking user: no such directory, not writable, a name or path too
// long for what nmprof will create, or something other than a regular file there.
bool check_output(const std::string& output, std::string* error);

}  // namespace nmprof::cli
