#include "formats/profile/time_series.h"

#include <algorithm>

namespace nmprof::profile {

void TimeSeries::allocated(int64_t time_nanos, double bytes, bool live) {
  Bin& b = bin(time_nanos);
  b.allocated += bytes;
  if (live) {
    b.live_change += bytes;
    b.peak_rise = std::max(b.peak_rise, b.live_change);
  }
  b.last_allocation = std::max(b.last_allocation, time_nanos);
}

void TimeSeries::freed(int64_t time_nanos, double bytes) { bin(time_nanos).live_change -= bytes; }

TimeSeries::Bin& TimeSeries::bin(int64_t time_nanos) {
  if (bins_.empty()) {
    bins_.resize(kBins);
    origin_ = time_nanos;
  }
  while (time_nanos < origin_) widen(true);
  while ((time_nanos - origin_) / width_ >= static_cast<int64_t>(kBins)) widen(false);
  return bins_[static_cast<size_t>((time_nanos - origin_) / width_)];
}

// Doubles the bin width. The bins seen so far take the left half of the new span, or
// the right half when the span grows to the left (its origin moves back by the old span).
void TimeSeries::widen(bool to_the_left) {
  std::vector<Bin> wider(kBins);
  size_t offset = to_the_left ? kBins / 2 : 0;
  for (size_t i = 0; i < kBins; i++) {
    Bin& w = wider[offset + i / 2];
    w.allocated += bins_[i].allocated;
    w.peak_rise = std::max(w.peak_rise, w.live_change + bins_[i].peak_rise);
    w.live_change += bins_[i].live_change;
    w.last_allocation = std::max(w.last_allocation, bins_[i].last_allocation);
  }
  if (to_the_left) origin_ -= width_ * static_cast<int64_t>(kBins);
  width_ *= 2;
  bins_ = std::move(wider);
}

}  // namespace nmprof::profile
