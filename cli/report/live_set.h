// Which sampled allocations are still live at the end of the recording: frees are
// paired with allocations by address within a process, in time order.
#pragma once

#include <cstdint>
#include <vector>

#include "formats/profile/profile.h"

namespace nmprof::report {

struct LiveSet {
  std::vector<uint32_t> allocations;  // indexes into Profile::allocations, in index order
  uint64_t matched_frees = 0;
  uint64_t unmatched_frees = 0;  // frees of blocks the recording never saw allocated
  // Per allocation (index into Profile::allocations): when it was freed, or kNeverFreed.
  std::vector<int64_t> freed_at;
};

constexpr int64_t kNeverFreed = INT64_MAX;

// A free matches the latest earlier native allocation at its address that is not yet
// freed; a free with no such allocation is counted and otherwise ignored. At equal
// times an allocation comes before a free.
LiveSet live_allocations(const profile::Profile& profile);

}  // namespace nmprof::report
