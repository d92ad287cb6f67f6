#include "cli/report/render/flame_graph_chart.h"

#include <algorithm>
#include <cmath>

namespace nmprof::report {
namespace {

using profile::Lifetimes;

constexpr size_t kMinBins = 16;  // cells merge no further to fit kMaxCells
// A recording's span reaching further than this many bins beyond its samples is a
// damaged file's: the chart covers the samples only.
constexpr int64_t kMaxReach = 1 << 20;

int64_t clamped(__int128 v) { return static_cast<int64_t>(std::clamp<__int128>(v, INT64_MIN, INT64_MAX)); }

int64_t rounded(double v) { return std::isfinite(v) ? std::llround(v) : 0; }

}  // namespace

Chart::Chart(const profile::Profile& profile, const std::vector<uint32_t>& row_of_allocation, bool live)
    : run_(recording_span(profile)) {
  const Lifetimes& lifetimes = profile.lifetimes();
  const profile::TimeBins& clock = lifetimes.bins();
  int64_t low = INT64_MAX, high = INT64_MIN;
  lifetimes.for_each([&](const Lifetimes::Cell& c, const profile::Totals&) {
    if (row_of_allocation.at(c.allocation) == kNoRow) return;
    low = std::min<int64_t>(low, c.allocated_bin);
    high = std::max<int64_t>(high, c.freed_bin == Lifetimes::kNotFreed ? c.allocated_bin : c.freed_bin);
  });
  if (low > high) return;
  auto lifetime_bin = [&](int64_t t) {
    __int128 since = __int128{t} - clock.start_nanos();
    return clamped(since >= 0 ? since / clock.bin_nanos() : -((-since + clock.bin_nanos() - 1) / clock.bin_nanos()));
  };
  int64_t run_low = lifetime_bin(run_.start_nanos), run_high = lifetime_bin(run_.end_nanos);
  if (run_low >= low - kMaxReach && run_high <= high + kMaxReach) {
    low = std::min(low, run_low);
    high = std::max(high, run_high);
  }
  first_ = low;
  for (;;) {
    count_ = static_cast<size_t>((high - low) / merged_ + 1);
    if (count_ > kMaxBins) {
      merged_ *= 2;
      continue;
    }
    take_cells(profile, row_of_allocation);
    if (cells_.size() <= kMaxCells || count_ <= kMinBins) break;
    merged_ *= 2;
  }
  start_nanos_ = clamped(__int128{clock.start_nanos()} + __int128{first_} * clock.bin_nanos());
  bin_nanos_ = clamped(__int128{clock.bin_nanos()} * merged_);
  if (live) take_highs(profile.time_series());
}

size_t Chart::bin_of(int64_t lifetime_bin) const { return static_cast<size_t>((lifetime_bin - first_) / merged_); }

void Chart::take_cells(const profile::Profile& profile, const std::vector<uint32_t>& row_of_allocation) {
  cells_.clear();
  profile.lifetimes().for_each([&](const Lifetimes::Cell& c, const profile::Totals& totals) {
    uint32_t row = row_of_allocation[c.allocation];
    if (row == kNoRow) return;
    int64_t freed = c.freed_bin == Lifetimes::kNotFreed ? -1 : static_cast<int64_t>(bin_of(c.freed_bin));
    cells_[{row, bin_of(c.allocated_bin), freed}].add(totals);
  });
}

// Per chart bin, the most live at any moment of it: the live total at its start, or
// more within it.
void Chart::take_highs(const profile::TimeSeries& series) {
  high_.assign(count_, 0);
  auto chart_bin = [&](int64_t t) {
    __int128 since = __int128{t} - start_nanos_;
    return static_cast<size_t>(std::clamp<__int128>(since < 0 ? 0 : since / bin_nanos_, 0, count_ - 1));
  };
  double now = 0;
  size_t current = 0;
  for (size_t i = 0; i < series.bins().size(); i++) {
    const auto& b = series.bins()[i];
    if (b.live_change == 0 && b.peak_rise == 0) continue;
    size_t bin = chart_bin(series.bin_start(i));
    for (; current < bin; current++) high_[current + 1] = std::max(high_[current + 1], now);
    high_[bin] = std::max(high_[bin], now + b.peak_rise);
    now += b.live_change;
  }
  for (; current + 1 < count_; current++) high_[current + 1] = std::max(high_[current + 1], now);
}

void Chart::write(JsonWriter& json, size_t rows) const {
  json.key("time");
  json.begin_object();
  json.field("start", clamped(__int128{start_nanos_} - run_.start_nanos));
  json.field("bin", bin_nanos_);
  json.field("bins", static_cast<uint64_t>(count_));
  json.field("end", clamped(__int128{run_.end_nanos} - run_.start_nanos));
  if (!high_.empty()) {
    json.key("high");
    json.begin_array();
    for (double h : high_) json.value(rounded(h));
    json.end_array();
  }
  json.end_object();
  json.key("cells");
  json.begin_array();
  auto cell = cells_.begin();
  for (uint32_t row = 0; row < rows; row++) {
    json.begin_array();
    size_t previous = 0;
    for (; cell != cells_.end() && std::get<0>(cell->first) == row; ++cell) {
      const auto& [key, totals] = *cell;
      size_t allocated = std::get<1>(key);
      int64_t freed = std::get<2>(key);
      json.value(static_cast<uint64_t>(allocated - previous));
      json.value(freed < 0 ? int64_t{-1} : freed - static_cast<int64_t>(allocated));
      previous = allocated;
      json.value(rounded(totals.bytes));
      json.value(rounded(totals.count));
    }
    json.end_array();
  }
  json.end_array();
}

}  // namespace nmprof::report
