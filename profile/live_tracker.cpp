#include "profile/live_tracker.h"

#include <algorithm>

namespace nmprof::profile {

void LiveTracker::allocated(uint32_t process, uint64_t address, const Block& block, const Changes& changes) {
  add(process, {block.time_nanos, arrivals_++, address, block}, changes);
}

void LiveTracker::freed(uint32_t process, uint64_t address, int64_t time_nanos, const Changes& changes,
                        const std::optional<Move>& moved, bool in_later_chunk) {
  Event event{time_nanos, kFree | (in_later_chunk ? kInLaterChunk : 0) | arrivals_++, address, {}};
  if (moved) {
    event.moved_to = moved->address;
    event.block = {0, moved->weight, time_nanos, moved->size};
  }
  add(process, event, changes);
}

void LiveTracker::add(uint32_t process, const Event& event, const Changes& changes) {
  auto found = waiting_.find(process);
  if (found == waiting_.end()) {
    pair(process, event, changes);
    return;
  }
  Waiting& waiting = found->second;
  waiting.events.push_back(event);
  if (waiting.events.size() >= waiting.sort_at) pair_older(process, waiting, changes);
}

void LiveTracker::hold_from(uint32_t process, int64_t time_nanos, const Changes& changes) {
  Waiting& waiting = waiting_[process];
  waiting.hold_from = time_nanos;
  if (waiting.events.size() >= waiting.sort_at) pair_older(process, waiting, changes);
}

void LiveTracker::settle(const Changes& changes) {
  for (auto& [process, waiting] : waiting_) {
    waiting.hold_from = INT64_MAX;
    pair_older(process, waiting, changes);
  }
  waiting_.clear();
}

void LiveTracker::ended(uint32_t process, int64_t time_nanos, const Changes& changes) {
  auto of_process = [process](const auto& entry) { return entry.first.process == process; };
  for (const auto& [where, blocks] : earlier_)
    if (where.process == process)
      for (const Block& block : blocks) changes(block, time_nanos);
  std::erase_if(earlier_, of_process);
  for (const auto& [where, block] : latest_)
    if (where.process == process) changes(block, time_nanos);
  std::erase_if(latest_, of_process);
}

// Sorting what waits each time a few more came would cost a sort per event: the
// events wait until twice as many as were left waiting last time have come.
void LiveTracker::pair_older(uint32_t process, Waiting& waiting, const Changes& changes) {
  auto& events = waiting.events;
  std::sort(events.begin(), events.end());
  auto older = std::partition_point(events.begin(), events.end(),
                                    [&](const Event& e) { return e.time_nanos < waiting.hold_from; });
  if (waiting.hold_from == INT64_MAX) older = events.end();
  for (auto e = events.begin(); e != older; ++e) pair(process, *e, changes);
  events.erase(events.begin(), older);
  waiting.sort_at = std::max(kFirstSort, 2 * events.size());
}

void LiveTracker::pair(uint32_t process, const Event& event, const Changes& changes) {
  Where where{event.address, process};
  if (!(event.order & kFree)) {
    become_live(process, event.address, event.block, changes);
    return;
  }
  auto latest = latest_.find(where);
  if (latest == latest_.end()) {
    (event.order & kInLaterChunk ? of_earlier_chunks_ : unmatched_)++;
    return;
  }
  matched_++;
  Block freed = release(latest, event.time_nanos, changes);
  if (event.moved_to) become_live(process, event.moved_to, {freed.allocation, event.block.weight, event.time_nanos,
                                                            event.block.size}, changes);
}

LiveTracker::Block LiveTracker::release(std::unordered_map<Where, Block, Hash>::iterator latest, int64_t time_nanos,
                                        const Changes& changes) {
  Block freed = latest->second;
  changes(freed, time_nanos);
  auto hidden = earlier_.find(latest->first);
  if (hidden == earlier_.end()) {
    latest_.erase(latest);
  } else {
    latest->second = hidden->second.back();
    hidden->second.pop_back();
    if (hidden->second.empty()) earlier_.erase(hidden);
  }
  return freed;
}

void LiveTracker::begin_file() {
  at_file_start_.clear();
  for (const auto& [where, block] : latest_) at_file_start_.emplace(where, block.time_nanos);
}

bool LiveTracker::restate(uint32_t process, uint64_t address) {
  Where where{address, process};
  at_file_start_.erase(where);
  return latest_.contains(where);
}

void LiveTracker::end_file(const std::vector<uint32_t>& processes, int64_t time_nanos, const Changes& changes) {
  for (const auto& [where, time] : at_file_start_) {
    if (std::find(processes.begin(), processes.end(), where.process) == processes.end()) continue;
    auto latest = latest_.find(where);
    if (latest != latest_.end() && latest->second.time_nanos == time) release(latest, time_nanos, changes);
  }
  at_file_start_.clear();
}

void LiveTracker::become_live(uint32_t process, uint64_t address, const Block& block, const Changes& changes) {
  auto [latest, added] = latest_.try_emplace(Where{address, process}, block);
  if (!added) {
    earlier_[Where{address, process}].push_back(latest->second);
    latest->second = block;
  }
  changes(block, std::nullopt);
}

}  // namespace nmprof::profile
