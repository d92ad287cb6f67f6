#include "cli/report/timeline.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace nmprof::report {

std::optional<Timeline> timeline(const profile::Profile& profile, std::span<const uint32_t> allocations,
                                 const LiveSet* live, int64_t start_nanos, int64_t end_nanos, size_t bins) {
  if (end_nanos <= start_nanos || bins == 0 || allocations.empty()) return std::nullopt;
  Timeline t;
  t.start_nanos = start_nanos;
  // Unsigned: a file's times may span the whole int64 range.
  uint64_t span = static_cast<uint64_t>(end_nanos) - static_cast<uint64_t>(start_nanos);
  t.bin_nanos = static_cast<int64_t>(std::max<uint64_t>(span / bins + (span % bins != 0), 1));
  t.allocated_bytes.assign(bins, 0);
  auto bin_of = [&](int64_t time) {
    if (time <= start_nanos) return size_t{0};
    uint64_t since_start = static_cast<uint64_t>(time) - static_cast<uint64_t>(start_nanos);
    return static_cast<size_t>(std::min<uint64_t>(since_start / static_cast<uint64_t>(t.bin_nanos), bins - 1));
  };
  std::vector<std::pair<int64_t, double>> changes;  // time, change of live bytes
  for (uint32_t i : allocations) {
    const auto& a = profile.allocations[i];
    t.allocated_bytes[bin_of(a.time_nanos)] += a.estimated_bytes();
    if (!live) continue;
    changes.emplace_back(a.time_nanos, a.estimated_bytes());
    if (live->freed_at[i] != kNeverFreed) changes.emplace_back(live->freed_at[i], -a.estimated_bytes());
  }
  if (!live) return t;
  std::sort(changes.begin(), changes.end());  // at equal times frees (negative) come first
  t.live_bytes.assign(bins, 0);
  double now = 0;
  size_t next_bin = 0;
  for (const auto& [time, change] : changes) {
    for (size_t b = bin_of(time); next_bin < b; next_bin++) t.live_bytes[next_bin] = now;
    now += change;
    if (now > t.peak_live_bytes) {
      t.peak_live_bytes = now;
      t.peak_live_nanos = time > start_nanos ? static_cast<int64_t>(static_cast<uint64_t>(time) - static_cast<uint64_t>(start_nanos)) : 0;
    }
  }
  for (; next_bin < bins; next_bin++) t.live_bytes[next_bin] = now;
  return t;
}

std::string sparkline(std::span<const double> values, size_t columns) {
  static const char* const kBars[] = {"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};
  columns = std::clamp<size_t>(columns, 1, std::max<size_t>(values.size(), 1));
  std::vector<double> means(columns, 0);  // each column the mean of its share of the values
  for (size_t c = 0; c < columns; c++) {
    size_t begin = c * values.size() / columns, end = (c + 1) * values.size() / columns;
    for (size_t i = begin; i < end; i++) {
      if (std::isfinite(values[i])) means[c] += values[i] / static_cast<double>(end - begin);  // a damaged file's weights can overflow
    }
  }
  double top = 0;
  for (double v : means) top = std::max(top, v);
  std::string line;
  for (double v : means) {
    double share = top > 0 && std::isfinite(top) ? std::max(v, 0.0) / top : 0;
    int level = std::isfinite(share) ? static_cast<int>(share * 7 + 0.5) : 0;
    line += kBars[std::clamp(level, 0, 7)];
  }
  return line;
}

}  // namespace nmprof::report
