// --confidence: how sure the intervals of a report and the decisions of its CI gates
// are (a number between 0 and 1; 0.95 by default).
#pragma once

#include <CLI/CLI.hpp>

namespace nmprof::cli {

CLI::Option* add_confidence_option(CLI::App* command, double& target);

}  // namespace nmprof::cli
