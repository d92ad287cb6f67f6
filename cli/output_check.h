// Before a recording starts, its output must be known to be writable: a run that
// cannot be saved is wasted.
#pragma once

#include <string>

namespace nmprof::cli {

// False with a one-line *error when `output` cannot be created or overwritten.
bool check_output(const std::string& output, std::string* error);

}  // namespace nmprof::cli
