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

uint64_t TimeSeries::since_origin(int64_t time_nanos) const {
  return static_cast<uint64_t>(time_nanos) - static_cast<uint64_t>(origin_);
}

int64_t TimeSeries::bin_start(size_t i) const {
  return static_cast<int64_t>(static_cast<uint64_t>(origin_) + i * width_);
}

TimeSeries::Bin& TimeSeries::bin(int64_t time_nanos) {
  if (bins_.empty()) {
    bins_.resize(kBins);
    origin_ = time_nanos;
  }
  while (time_nanos < origin_) widen(true);
  while (since_origin(time_nanos) / width_ >= kBins) widen(false);
  return bins_[since_origin(time_nanos) / width_];
}

// Doubles the bin width. The span grows to the right, or to the left by the old span
// (as far as the earliest time there is): each bin seen so far goes where it begins.
void TimeSeries::widen(bool to_the_left) {
  int64_t origin = origin_;
  if (to_the_left) {
    uint64_t room = static_cast<uint64_t>(origin_) - static_cast<uint64_t>(INT64_MIN);
    origin = room / kBins < width_ ? INT64_MIN : static_cast<int64_t>(static_cast<uint64_t>(origin_) - width_ * kBins);
  }
  std::vector<Bin> wider(kBins);
  uint64_t shift = static_cast<uint64_t>(origin_) - static_cast<uint64_t>(origin);
  for (size_t i = 0; i < kBins; i++) {
    Bin& w = wider[(shift + i * width_) / (2 * width_)];
    w.allocated += bins_[i].allocated;
    w.peak_rise = std::max(w.peak_rise, w.live_change + bins_[i].peak_rise);
    w.live_change += bins_[i].live_change;
    w.last_allocation = std::max(w.last_allocation, bins_[i].last_allocation);
  }
  origin_ = origin;
  width_ *= 2;
  bins_ = std::move(wider);
}

}  // namespace nmprof::profile
