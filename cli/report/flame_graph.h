// `--format html`: one self-contained flame graph page (no network, opens from
// disk): allocated and live views, search with the matched share, click to zoom,
// frames coloured by kind, tooltips with estimated bytes, count and share. The view,
// search and zoom are kept in the page's URL fragment (#view=live&search=...).
#pragma once

#include <ostream>

#include "cli/report/diff_report.h"
#include "cli/report/heap_view.h"
#include "formats/profile/profile.h"

namespace nmprof::report {

void write_flame_graph(const profile::Profile& profile, const HeapView& view, bool live, std::ostream& out);
// `--diff --format html`: widths are the new recording's, colours the change from
// the base (red: grew, green: shrank); tooltips give both values.
void write_diff_flame_graph(const Diff& diff, std::ostream& out);

}  // namespace nmprof::report
