// `--peek REGEX`: for each function matching REGEX, who calls it and what it calls,
// with the bytes that went each way (pprof's -peek, heaptrack_print's caller/callee
// lists). Recursion counts a stack once per function.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cli/report/model/aggregation.h"
#include "profile/profile.h"

namespace nmprof::report {

struct PeekNeighbour {
  uint32_t frame = kNoFrame;  // one frame of the caller or callee; kNoFrame: none (the stack's root)
  Totals totals;
};

struct PeekRow {
  uint32_t frame = 0;  // one frame of the function
  Totals self, total;
  std::vector<PeekNeighbour> callers;  // most bytes first
  std::vector<PeekNeighbour> callees;  // most bytes first; self allocations are not a callee
};

// Most total bytes first, at most `top` functions (and `top` callers and callees each).
std::vector<PeekRow> peek(const profile::Profile& profile, std::span<const StackRow> stacks, const std::string& regex,
                          size_t top);

}  // namespace nmprof::report
