// An option taking a number of seconds (attach's --duration and --timeout), or a
// duration (run's --loop: the same with an optional unit, 90s, 1.5m, 2h): a finite
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
CLI::Option* add_duration_option(CLI::App* command, const std::string& name, double& target, SecondsRange range,
                                 const std::string& help);

}  // namespace nmprof::cli
