// `nmprof completion bash|zsh`: completion scripts made from the command line's own
// definition, so they know every subcommand, option and choice the program has.
// `cmake --install` installs both (bash-completion and zsh's vendor directory).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace nmprof::cli {

std::string bash_completion(const CLI::App& app);
std::string zsh_completion(const CLI::App& app);

// Adds the `completion` subcommand; `shell` receives its argument.
CLI::App* add_completion_command(CLI::App& app, std::string& shell);

}  // namespace nmprof::cli
