#include "cli/report/heap_view.h"

#include <unordered_map>

#include "cli/report/live_set.h"
#include "cli/report/report.h"

namespace nmprof::report {

HeapView heap_view(const profile::Profile& profile, SampleLabels* labels) {
  HeapView view;
  view.source = reported_source(profile);
  view.has_live = view.source == profile::AllocationSource::Native && has_live_data(profile);
  std::unordered_map<uint64_t, uint32_t> row_of;  // by stack and label group
  auto row = [&](const profile::Allocation& a) -> StackValues& {
    uint32_t group = labels ? labels->group(a) : 0;
    auto [it, added] = row_of.try_emplace(uint64_t{a.stack} << 32 | group, static_cast<uint32_t>(view.stacks.size()));
    if (added) view.stacks.push_back({a.stack, group, {}, {}});
    return view.stacks[it->second];
  };
  for (const auto& a : profile.allocations) {
    if (a.source != view.source) continue;
    row(a).allocated.add(a);
    view.allocated.add(a);
  }
  if (view.has_live) {
    for (uint32_t i : live_allocations(profile).allocations) {
      row(profile.allocations[i]).live.add(profile.allocations[i]);
      view.live.add(profile.allocations[i]);
    }
  }
  return view;
}

}  // namespace nmprof::report
