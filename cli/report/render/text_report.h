// The text form of a report, as wide as ReportOptions::width.
#pragma once

#include <ostream>
#include <vector>

#include "cli/report/model/diff_report.h"
#include "cli/report/model/report.h"

namespace nmprof::report {

void write_text_report(const Report& report, std::ostream& out);
// The text form of a diff: its totals, then the top stacks and functions by growth.
void write_diff_text(const Diff& diff, size_t top, size_t width, std::ostream& out);
// "~6.02 GiB ± 80.1 MiB in ~1.23M allocations (12,345 samples)" ("blocks" when live), as far as
// the samples allow.
std::string totals_text(const Report& report, const Totals& totals, bool live);
// " ± 4.10 MiB": half the width of the interval of an estimate's bytes at the
// report's confidence; "" when nothing was guessed (every allocation recorded).
std::string margin_text(const Report& report, const Totals& totals);
// The live totals, or the bounds of live bytes when the tracking table overflowed
// (an upper bound where the agent's count does not apply: at the peak).
std::string live_text(const Report& report);
// "~40.2 MiB at 613 ms into the run", the timeline's peak of live bytes, said to be an upper bound
// when the tracking table overflowed.
std::string peak_live_text(const Report& report);
// The report of a recording without samples: why, and what samples more.
std::string nothing_sampled_text(const Report& report);
// One line per stack: "    5.00 MiB ± 1.02 MiB   66.7%  fill < load < main", the share
// taken of `whole` bytes.
void write_compact_stacks(const Report& report, const std::vector<RankedStack>& stacks, double whole, size_t width,
                          std::ostream& out);

}  // namespace nmprof::report
