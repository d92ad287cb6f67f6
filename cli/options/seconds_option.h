// An option taking a number of seconds (attach's --duration and --timeout): a finite
// decimal number in a range that nmprof can wait for. nan, inf, 1e308 and negative
// numbers are refused in one line, instead of reaching a deadline computation.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace nmprof::cli {

struct SecondsRange {
  double min;  // seconds, inclusive
  double max;
};

CLI::Option* add_seconds_option(CLI::App* command, const std::string& name, double& target, SecondsRange range,
                                const std::string& help);

}  // namespace nmprof::cli
