// The earliest time among a chunk's samples and frees from each point of the chunk
// on, found by a first pass over it, so that the pass that reads them knows before
// which time no event is still to come (Profile::hold_from). Kept per block of
// events: eight bytes for thousands of events.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nmprof::profile {

class EarliestAhead {
 public:
  static constexpr size_t kBlockEvents = 4096;

  // The next event, in file order.
  void add(int64_t time_nanos);
  // After the last event.
  void finish();
  // Where the earliest time from event `index` on is known (a block begins).
  static bool block_begins(size_t index) { return index % kBlockEvents == 0; }
  // The earliest time of event `index` (a block's first) and the events after it.
  int64_t from(size_t index) const { return earliest_[index / kBlockEvents]; }

 private:
  std::vector<int64_t> earliest_;  // per block: first of its own, then of it and all after
  size_t events_ = 0;
};

}  // namespace nmprof::profile
