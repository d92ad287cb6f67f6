// Allocated and live estimates per stack side by side: what pprof's four heap
// sample types, collapsed stacks and diffs are made of.
#pragma once

#include <cstdint>
#include <vector>

#include "cli/report/aggregation.h"
#include "cli/report/sample_labels.h"
#include "formats/profile/profile.h"

namespace nmprof::report {

struct StackValues {
  uint32_t stack = 0;
  uint32_t group = 0;  // SampleLabels::group of its allocations; 0 without labels
  Totals allocated;
  Totals live;  // zero without live data
};

struct HeapView {
  profile::AllocationSource source = profile::AllocationSource::Native;
  bool has_live = false;  // the recording tracked frees
  std::vector<StackValues> stacks;  // in order of first allocation
  Totals allocated;
  Totals live;
};

// Over the same samples as the report (native ones when there are any, else the
// JDK's Java heap samples), one row per stack, or per stack and label group when
// `labels` is given. Throws ReportError when there are no allocations.
HeapView heap_view(const profile::Profile& profile, SampleLabels* labels = nullptr);

}  // namespace nmprof::report
