#include "formats/profile/live_tracker.h"

namespace nmprof::profile {

bool LiveTracker::allocated(uint32_t process, uint64_t address, const Block& block) {
  Where where{address, process};
  if (!waiting_frees_.empty()) {
    // The earliest free at or after the block frees it.
    auto range = waiting_frees_.equal_range(where);
    auto free = range.second;
    for (auto it = range.first; it != range.second; ++it)
      if (it->second >= block.time_nanos && (free == range.second || it->second < free->second)) free = it;
    if (free != range.second) {
      waiting_frees_.erase(free);
      matched_++;
      return false;
    }
  }
  auto [it, added] = latest_.try_emplace(where, block);
  if (added) return true;
  if (it->second.time_nanos <= block.time_nanos) {
    earlier_.emplace(where, it->second);
    it->second = block;
  } else {
    earlier_.emplace(where, block);
  }
  return true;
}

std::optional<LiveTracker::Block> LiveTracker::freed(uint32_t process, uint64_t address, int64_t time_nanos) {
  Where where{address, process};
  auto latest = latest_.find(where);
  if (latest == latest_.end()) {
    waiting_frees_.emplace(where, time_nanos);
    return std::nullopt;
  }
  // The latest earlier block: the latest one, or else one waiting in earlier_.
  auto range = earlier_.equal_range(where);
  auto candidate = range.second;
  for (auto it = range.first; it != range.second; ++it)
    if (it->second.time_nanos <= time_nanos &&
        (candidate == range.second || it->second.time_nanos > candidate->second.time_nanos))
      candidate = it;
  Block freed;
  if (latest->second.time_nanos <= time_nanos) {
    freed = latest->second;
    // The next latest takes its place.
    auto next = range.second;
    for (auto it = range.first; it != range.second; ++it)
      if (next == range.second || it->second.time_nanos > next->second.time_nanos) next = it;
    if (next == range.second) {
      latest_.erase(latest);
    } else {
      latest->second = next->second;
      earlier_.erase(next);
    }
  } else if (candidate != range.second) {
    freed = candidate->second;
    earlier_.erase(candidate);
  } else {
    waiting_frees_.emplace(where, time_nanos);
    return std::nullopt;
  }
  matched_++;
  return freed;
}

}  // namespace nmprof::profile
