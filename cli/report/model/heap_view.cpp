#include "cli/report/model/heap_view.h"

#include <unordered_map>

#include "cli/report/model/report.h"

namespace nmprof::report {

namespace {

// What tells rows apart: the stack, and with by_context what labels they carry.
struct RowKey {
  uint32_t stack, process, context;
  uint64_t span_id, local_root_span_id;
  bool operator==(const RowKey&) const = default;
};

struct RowKeyHash {
  size_t operator()(const RowKey& k) const {
    size_t h = std::hash<uint64_t>()(uint64_t{k.stack} << 32 | k.context) ^ (size_t{k.process} << 7);
    return h ^ std::hash<uint64_t>()(k.span_id * 0x9e3779b97f4a7c15ull + k.local_root_span_id);
  }
};

}  // namespace

HeapView heap_view(const profile::Profile& profile, bool by_context) {
  HeapView view;
  view.source = reported_source(profile);
  view.has_live = view.source == profile::AllocationSource::Native && has_live_data(profile);
  view.by_context = by_context;
  std::unordered_map<RowKey, uint32_t, RowKeyHash> row_of;
  const auto& allocations = profile.allocations();
  for (uint32_t i = 0; i < allocations.size(); i++) {
    const auto& a = allocations[i];
    if (a.source != view.source) continue;
    RowKey key{a.stack, 0, 0, 0, 0};
    if (by_context) key = {a.stack, a.process, a.context, a.span_id, a.local_root_span_id};
    auto [it, added] = row_of.try_emplace(key, static_cast<uint32_t>(view.stacks.size()));
    if (added) view.stacks.push_back({a.stack, i, {}, {}});
    StackValues& values = view.stacks[it->second];
    values.allocated.add(a.allocated);
    view.allocated.add(a.allocated);
    if (!view.has_live) continue;
    values.live.add(a.live);
    view.live.add(a.live);
  }
  return view;
}

}  // namespace nmprof::report
