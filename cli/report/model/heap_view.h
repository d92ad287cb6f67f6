// Allocated and live estimates per stack side by side: what pprof's four heap
// sample types, collapsed stacks and diffs are made of.
#pragma once

#include <cstdint>
#include <vector>

#include "cli/report/model/aggregation.h"
#include "profile/profile.h"

namespace nmprof::report {

// What collapsed stacks count of a view's totals: estimated bytes or allocations.
enum class Value { Bytes, Count };

struct StackValues {
  uint32_t stack = 0;
  uint32_t origin = 0;  // one of its allocations (index into Profile::allocations()), for its context
  Totals allocated;
  Totals live;  // zero without live data
};

struct HeapView {
  profile::AllocationSource source = profile::AllocationSource::Native;
  bool has_live = false;  // the recording tracked frees
  bool by_context = false;
  std::vector<StackValues> stacks;  // in order of first allocation
  Totals allocated;
  Totals live;
};

// Over the same samples as the report (native ones when there are any, else the
// JDK's Java heap samples), one row per stack; with `by_context`, one per stack,
// process and context (span ids, attributes), as pprof labels tell them apart.
// Throws ReportError when there are no allocations.
HeapView heap_view(const profile::Profile& profile, bool by_context = false);

}  // namespace nmprof::report
