// Collapsed ("folded") stacks, one line per stack: "root;caller;leaf value", the
// input of flamegraph.pl, speedscope and async-profiler's converters.
#pragma once

#include <ostream>
#include <string>

#include "cli/report/model/diff_report.h"
#include "cli/report/model/heap_view.h"
#include "profile/profile.h"

namespace nmprof::report {

// Estimated bytes or allocations per stack, allocated or live; stacks whose frames
// read the same (a Java method at several lines) are summed; zero lines are left out.
void write_collapsed(const profile::Profile& profile, const HeapView& view, bool live, Value value, std::ostream& out);

// flamegraph.pl's differential input (as difffolded.pl writes it): "root;...;leaf BASE NEW".
void write_diff_collapsed(const Diff& diff, Value value, std::ostream& out);

// The value a collapsed line carries for some totals.
double collapsed_value(const Totals& totals, Value value);

}  // namespace nmprof::report
