#include "cli/report/model/aggregation.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace nmprof::report {
namespace {

using profile::Profile;

void add_process_bytes(StackRow& row, uint32_t process, double bytes) {
  for (auto& [p, b] : row.processes) {
    if (p == process) {
      b += bytes;
      return;
    }
  }
  row.processes.emplace_back(process, bytes);
}

std::vector<StackRow> by_stack(const Profile& profile, std::span<const uint32_t> allocations, bool live) {
  std::vector<StackRow> rows;
  std::vector<uint32_t> row_of_stack(profile.stacks().size(), kNoFrame);
  for (uint32_t i : allocations) {
    const auto& a = profile.allocations()[i];
    const Totals& totals = live ? a.live : a.allocated;
    if (totals.samples == 0) continue;
    uint32_t& row = row_of_stack[a.stack];
    if (row == kNoFrame) {
      row = static_cast<uint32_t>(rows.size());
      rows.push_back({a.stack, {}, {}});
    }
    rows[row].totals.add(totals);
    add_process_bytes(rows[row], a.process, totals.bytes);
  }
  for (auto& r : rows)
    std::sort(r.processes.begin(), r.processes.end(), [](auto& x, auto& y) { return x.second > y.second; });
  std::sort(rows.begin(), rows.end(), [](const StackRow& x, const StackRow& y) {
    if (x.totals.bytes != y.totals.bytes) return x.totals.bytes > y.totals.bytes;
    if (x.totals.samples != y.totals.samples) return x.totals.samples > y.totals.samples;
    return x.stack < y.stack;
  });
  return rows;
}

// The frame a stack's bytes are self bytes of: the innermost, but in a PHP stack the
// innermost PHP function, which the engine's native frames inside it work for (PHP's
// own profilers show them so).
size_t self_frame(const Profile& profile, const std::vector<uint32_t>& frames) {
  for (size_t i = 0; i < frames.size(); i++) {
    profile::FrameKind kind = profile.frames()[frames[i]].kind;
    if (kind == profile::FrameKind::Php) return i;
    if (profile::is_runtime_frame(kind)) break;
  }
  return 0;
}

std::vector<FunctionRow> by_function(const Profile& profile, const std::vector<StackRow>& stacks) {
  FunctionIds ids(profile);
  std::vector<FunctionRow> rows;
  std::vector<size_t> last_stack;  // per function: the stack row that last added to its total
  FunctionRow no_frames;
  for (size_t s = 0; s < stacks.size(); s++) {
    const auto& frames = profile.stacks()[stacks[s].stack].frames;
    if (frames.empty()) {
      no_frames.self.add(stacks[s].totals);
      no_frames.total.add(stacks[s].totals);
      continue;
    }
    size_t self = self_frame(profile, frames);
    for (size_t i = 0; i < frames.size(); i++) {
      uint32_t id = ids.of(frames[i]);
      if (id >= rows.size()) {
        rows.resize(id + 1);
        last_stack.resize(id + 1, SIZE_MAX);
        rows[id].frame = ids.first_frame(id);
      }
      if (i == self) rows[id].self.add(stacks[s].totals);
      if (last_stack[id] != s) {  // recursion counts once
        last_stack[id] = s;
        rows[id].total.add(stacks[s].totals);
      }
    }
  }
  if (no_frames.self.samples) rows.push_back(no_frames);
  auto name = [&profile](const FunctionRow& r) {
    return r.frame == kNoFrame ? std::string() : profile.frames()[r.frame].function;
  };
  std::sort(rows.begin(), rows.end(), [&](const FunctionRow& x, const FunctionRow& y) {
    if (x.self.bytes != y.self.bytes) return x.self.bytes > y.self.bytes;
    if (x.total.bytes != y.total.bytes) return x.total.bytes > y.total.bytes;
    return name(x) < name(y);
  });
  return rows;
}

}  // namespace

FunctionIds::FunctionIds(const Profile& profile) : profile_(profile), of_frame_(profile.frames().size(), kNoFrame) {}

uint32_t FunctionIds::of(uint32_t frame) {
  uint32_t& id = of_frame_[frame];
  if (id == kNoFrame) {
    const auto& f = profile_.frames()[frame];
    auto [it, inserted] = ids_.try_emplace(f.function + '\x1f' + f.container + '\x1f' + f.signature,
                                           static_cast<uint32_t>(first_frame_.size()));
    if (inserted) first_frame_.push_back(frame);
    id = it->second;
  }
  return id;
}

Aggregate aggregate(const Profile& profile, std::span<const uint32_t> allocations, bool live) {
  Aggregate result;
  result.stacks = by_stack(profile, allocations, live);
  for (const auto& r : result.stacks) result.totals.add(r.totals);
  result.functions = by_function(profile, result.stacks);
  return result;
}

AgeSummary age_summary(const Profile& profile, std::span<const profile::LiveSample> live) {
  AgeSummary summary;
  std::vector<std::pair<int64_t, double>> ages;  // age, bytes
  double total = 0;
  for (const auto& a : live) {
    const auto& p = profile.processes[profile.allocations()[a.allocation].process];
    int64_t age = std::max<int64_t>(p.end_nanos - a.time_nanos, 0);
    int64_t span = p.end_nanos - p.start_nanos;
    double position = span > 0 ? static_cast<double>(a.time_nanos - p.start_nanos) / static_cast<double>(span) : 1;
    size_t quarter = static_cast<size_t>(std::clamp(position * 4, 0.0, 3.0));
    summary.share_by_quarter[quarter] += a.totals.bytes;
    summary.oldest_nanos = std::max(summary.oldest_nanos, age);
    ages.emplace_back(age, a.totals.bytes);
    total += a.totals.bytes;
  }
  if (total <= 0) return summary;
  for (auto& share : summary.share_by_quarter) share /= total;
  std::sort(ages.begin(), ages.end());
  double older_half = 0;
  for (auto it = ages.rbegin(); it != ages.rend(); ++it) {
    older_half += it->second;
    if (older_half >= total / 2) {
      summary.median_nanos = it->first;
      break;
    }
  }
  return summary;
}

}  // namespace nmprof::report
