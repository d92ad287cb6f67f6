// `--format html`: one self-contained flame graph page (no network, opens from disk).
// The page gets the stacks as one tree (StackTree), the values of each stack in each
// view, and the run over time (Chart); its script draws the views: allocated, live at
// the end, live at the peak, allocated in a time range selected on the chart (and what
// of it was still live at the range's end), live at a moment clicked on the chart; as
// callees (a flame graph) or callers (inverted); with search, zoom, a legend of the
// colours (by library, and by kind for Java and PHP frames) and tooltips. View,
// selection, search and zoom are kept in the URL fragment (#view=live&search=...).
#pragma once

#include <ostream>

#include "cli/report/model/diff_report.h"
#include "cli/report/model/report.h"
#include "profile/profile.h"

namespace nmprof::report {

// `at_peak`: the recording read up to its peak of live bytes, for the peak view (none:
// no peak view). The page opens on options.peak's or options.live's view, or on the
// peak when little was left live at the end (ended_well_below_peak).
void write_flame_graph(const profile::Profile& profile, const profile::Profile* at_peak, const ReportOptions& options,
                       std::ostream& out);
// `--diff --format html`: widths are the new recording's, colours the change from the
// base (red: grew, blue: shrank), the base scaled to the new recording's total unless
// the page is told not to; tooltips give both values.
void write_diff_flame_graph(const Diff& diff, std::ostream& out);

}  // namespace nmprof::report
