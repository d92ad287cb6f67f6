// An option taking an amount of memory ("100m", "1g", "4096"), as --fail-on-live does.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace nmprof::cli {

CLI::Option* add_size_option(CLI::App* command, const std::string& name, std::optional<uint64_t>& target,
                             const std::string& help);

}  // namespace nmprof::cli
