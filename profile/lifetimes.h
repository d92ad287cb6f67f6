// When the sampled blocks of each allocation (a Profile's origin) were allocated and
// when they were freed, summed in cells of (allocation bin, free bin) over kBins
// TimeBins: what a chart of the run needs to show, per stack, what was allocated in a
// time range and what of it was still live at any moment. Its size follows the
// allocations and the bins, not the length of the run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "profile/time_bins.h"
#include "profile/totals.h"

namespace nmprof::profile {

class Lifetimes {
 public:
  static constexpr size_t kBins = 256;
  static constexpr uint16_t kNotFreed = UINT16_MAX;

  struct Cell {
    uint32_t allocation = 0;
    uint16_t allocated_bin = 0;
    uint16_t freed_bin = kNotFreed;  // kNotFreed: not freed by the end (or never tracked)
  };

  // A block of `allocation` was allocated (it is live until freed() says otherwise).
  void allocated(uint32_t allocation, int64_t time_nanos, const Totals& totals);
  // A block that allocated() took in was freed.
  void freed(uint32_t allocation, int64_t allocated_nanos, int64_t freed_nanos, const Totals& totals);

  const TimeBins& bins() const { return clock_; }
  // visit(const Cell&, const Totals&) for each cell with samples, in no particular order.
  template <class Visit>
  void for_each(Visit&& visit) const {
    for (const auto& [key, totals] : cells_) visit(cell_of(key), totals);
  }

 private:
  static uint64_t key_of(const Cell& c) {
    return uint64_t{c.allocation} << 32 | uint64_t{c.allocated_bin} << 16 | c.freed_bin;
  }
  static Cell cell_of(uint64_t key) {
    return {static_cast<uint32_t>(key >> 32), static_cast<uint16_t>(key >> 16), static_cast<uint16_t>(key)};
  }
  void cover(int64_t time_nanos);

  TimeBins clock_{kBins};
  std::unordered_map<uint64_t, Totals> cells_;
};

}  // namespace nmprof::profile
