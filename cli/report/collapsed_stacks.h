// Collapsed ("folded") stacks, one line per stack: "root;caller;leaf value", the
// input of flamegraph.pl, speedscope and async-profiler's converters.
#pragma once

#include <ostream>
#include <string>

#include "cli/report/heap_view.h"
#include "formats/profile/profile.h"

namespace nmprof::report {

enum class Value { Bytes, Count };

// Marks a function inlined into its caller, as async-profiler does (flamegraph.pl's
// java palette colours it).
inline constexpr const char* kInlinedSuffix = "_[i]";

// Frames root first, separated by ';' (a ';' inside a name becomes ':').
std::string collapsed_stack(const profile::Profile& profile, const profile::Stack& stack);

// Estimated bytes or allocations per stack, allocated or live; stacks whose frames
// read the same (a Java method at several lines) are summed; zero lines are left out.
void write_collapsed(const profile::Profile& profile, const HeapView& view, bool live, Value value, std::ostream& out);

// The value a collapsed line carries for some totals.
double collapsed_value(const Totals& totals, Value value);

}  // namespace nmprof::report
