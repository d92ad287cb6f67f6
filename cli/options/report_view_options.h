// The options of `nmprof report` that shape what it shows: how stacks are simplified
// (--frame-types, --keep-frames, --fold) and the CI gate (--fail-on-live,
// --fail-on-growth).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/report/model/report.h"

namespace nmprof::cli {

void add_report_view_options(CLI::App* report, report::ReportOptions& options);

}  // namespace nmprof::cli
