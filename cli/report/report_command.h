// `nmprof report FILE [--top N] [--by stack|function] [--format text|json] [--live]`
// and the summary `nmprof run` prints when the profiled program has exited.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "cli/report/report.h"
#include "formats/profile/profile.h"

namespace nmprof::report {

// Reads options.file and writes the report to out; problems go to err as one line
// each. Returns the exit status: 0, or 1 when there is nothing to report.
int run_report(const ReportOptions& options, std::ostream& out, std::ostream& err);

// Where the recording is, its totals, the top stacks (live ones when anything is
// live at the end) and the command that shows more.
void print_run_summary(const profile::Profile& profile, const std::string& file, size_t top, std::ostream& out);

}  // namespace nmprof::report
