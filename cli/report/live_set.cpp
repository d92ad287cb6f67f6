#include "cli/report/live_set.h"

#include <algorithm>
#include <unordered_map>

namespace nmprof::report {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

struct Event {
  uint32_t process;
  int64_t time;
  bool is_free;
  uint32_t index;  // into allocations or frees

  bool operator<(const Event& o) const {
    if (process != o.process) return process < o.process;
    if (time != o.time) return time < o.time;
    return is_free < o.is_free;
  }
};

}  // namespace

LiveSet live_allocations(const profile::Profile& profile) {
  const auto& allocations = profile.allocations;
  std::vector<Event> events;
  for (uint32_t i = 0; i < allocations.size(); i++)
    if (allocations[i].source == profile::AllocationSource::Native)
      events.push_back({allocations[i].process, allocations[i].time_nanos, false, i});
  for (uint32_t i = 0; i < profile.frees.size(); i++)
    events.push_back({profile.frees[i].process, profile.frees[i].time_nanos, true, i});
  std::stable_sort(events.begin(), events.end());  // equal keys keep file order

  LiveSet live;
  live.freed_at.assign(allocations.size(), kNeverFreed);
  // Live allocations at an address form a chain from the latest to earlier ones.
  std::vector<uint32_t> earlier(allocations.size(), kNone);
  std::unordered_map<uint64_t, uint32_t> latest;
  uint32_t process = kNone;
  for (const Event& e : events) {
    if (e.process != process) {
      latest.clear();
      process = e.process;
    }
    if (!e.is_free) {
      auto [it, inserted] = latest.try_emplace(allocations[e.index].address, e.index);
      if (!inserted) {
        earlier[e.index] = it->second;
        it->second = e.index;
      }
      continue;
    }
    auto it = latest.find(profile.frees[e.index].address);
    if (it == latest.end()) {
      live.unmatched_frees++;
      continue;
    }
    live.matched_frees++;
    live.freed_at[it->second] = e.time;
    if (earlier[it->second] == kNone)
      latest.erase(it);
    else
      it->second = earlier[it->second];
  }
  for (const Event& e : events)
    if (!e.is_free && live.freed_at[e.index] == kNeverFreed) live.allocations.push_back(e.index);
  std::sort(live.allocations.begin(), live.allocations.end());
  return live;
}

}  // namespace nmprof::report
