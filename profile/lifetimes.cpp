#include "profile/lifetimes.h"

#include <utility>

namespace nmprof::profile {

void Lifetimes::cover(int64_t time_nanos) {
  clock_.cover(time_nanos, [this](const TimeBins::Widening& moved) {
    std::unordered_map<uint64_t, Totals> wider;
    wider.reserve(cells_.size());
    for (const auto& [key, totals] : cells_) {
      Cell c = cell_of(key);
      c.allocated_bin = static_cast<uint16_t>(moved(c.allocated_bin));
      if (c.freed_bin != kNotFreed) c.freed_bin = static_cast<uint16_t>(moved(c.freed_bin));
      wider[key_of(c)].add(totals);
    }
    cells_ = std::move(wider);
  });
}

void Lifetimes::allocated(uint32_t allocation, int64_t time_nanos, const Totals& totals) {
  cover(time_nanos);
  cells_[key_of({allocation, static_cast<uint16_t>(clock_.bin(time_nanos)), kNotFreed})].add(totals);
}

void Lifetimes::freed(uint32_t allocation, int64_t allocated_nanos, int64_t freed_nanos, const Totals& totals) {
  cover(freed_nanos);
  size_t allocated_bin = clock_.bin(allocated_nanos);
  auto live = cells_.find(key_of({allocation, static_cast<uint16_t>(allocated_bin), kNotFreed}));
  if (live == cells_.end()) return;  // not taken in by allocated()
  live->second.remove(totals);
  if (live->second.samples == 0) cells_.erase(live);
  // A free paired before its allocation's time (events paired as they came) counts as
  // at the allocation.
  size_t freed_bin = freed_nanos < allocated_nanos ? allocated_bin : clock_.bin(freed_nanos);
  cells_[key_of({allocation, static_cast<uint16_t>(allocated_bin), static_cast<uint16_t>(freed_bin)})].add(totals);
}

}  // namespace nmprof::profile
