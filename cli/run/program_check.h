// What nmprof run checks about the command before starting anything: that it
// exists, is executable, and can be hooked (a statically linked program has no
// dynamic linker to load the agent and no GOT to patch).
#pragma once

#include <string>

namespace nmprof::cli {

// Resolves `command` like execvp would and checks it (and, for a script, its
// interpreter). Returns the path, or an empty string with a one-line *error that
// says what is wrong and what to do.
std::string check_program(const std::string& command, std::string* error);

}  // namespace nmprof::cli
