#include "cli/report/model/timeline.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace nmprof::report {

int64_t nanos_since(int64_t start, int64_t time) {
  return time > start ? static_cast<int64_t>(static_cast<uint64_t>(time) - static_cast<uint64_t>(start)) : 0;
}

std::optional<Timeline> timeline(const profile::TimeSeries& series, bool live, int64_t start_nanos,
                                 int64_t end_nanos, size_t bins) {
  if (end_nanos <= start_nanos || bins == 0 || series.empty()) return std::nullopt;
  Timeline t;
  t.start_nanos = start_nanos;
  // Unsigned: a file's times may span the whole int64 range.
  uint64_t span = static_cast<uint64_t>(end_nanos) - static_cast<uint64_t>(start_nanos);
  t.bin_nanos = static_cast<int64_t>(std::max<uint64_t>(span / bins + (span % bins != 0), 1));
  t.allocated_bytes.assign(bins, 0);
  if (live) t.live_bytes.assign(bins, 0);
  auto bin_of = [&](int64_t time) {
    if (time <= start_nanos) return size_t{0};
    uint64_t since_start = static_cast<uint64_t>(time) - static_cast<uint64_t>(start_nanos);
    return static_cast<size_t>(std::min<uint64_t>(since_start / static_cast<uint64_t>(t.bin_nanos), bins - 1));
  };
  // Each bin of the series goes where its latest sample was taken (where it starts when
  // it has none); live bytes are summed in time order.
  double now = 0;
  size_t next_bin = 0;
  for (size_t i = 0; i < series.bins().size(); i++) {
    const auto& b = series.bins()[i];
    int64_t when = b.last_allocation != INT64_MIN ? b.last_allocation : series.bin_start(i);
    size_t bin = bin_of(when);
    t.allocated_bytes[bin] += b.allocated;
    if (!live || (b.live_change == 0 && b.peak_rise == 0)) continue;
    for (; next_bin < bin; next_bin++) t.live_bytes[next_bin] = now;
    now += b.live_change;
  }
  if (!live) return t;
  for (; next_bin < bins; next_bin++) t.live_bytes[next_bin] = now;
  if (auto peak = series.live_peak()) {
    t.peak_live_bytes = peak->live_bytes;
    t.peak_live_bytes_variance = peak->live_bytes_variance;
    t.peak_live_nanos = nanos_since(start_nanos, peak->time_nanos);
  }
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
