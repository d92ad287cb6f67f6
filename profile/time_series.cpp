#include "profile/time_series.h"

#include <algorithm>

namespace nmprof::profile {

void TimeSeries::allocated(int64_t time_nanos, double bytes) {
  Bin& b = bin(time_nanos);
  b.allocated += bytes;
  b.last_allocation = std::max(b.last_allocation, time_nanos);
}

void TimeSeries::became_live(int64_t time_nanos, double bytes, double bytes_variance) {
  Bin& b = bin(time_nanos);
  b.live_change += bytes;
  b.live_variance_change += bytes_variance;
  if (b.live_change > b.peak_rise) {
    b.peak_rise = b.live_change;
    b.peak_rise_nanos = time_nanos;
    b.variance_at_peak_rise = b.live_variance_change;
  }
}

void TimeSeries::freed(int64_t time_nanos, double bytes, double bytes_variance) {
  Bin& b = bin(time_nanos);
  b.live_change -= bytes;
  b.live_variance_change -= bytes_variance;
}

std::optional<TimeSeries::Peak> TimeSeries::live_peak() const {
  std::optional<Peak> peak;
  double now = 0, now_variance = 0;
  for (size_t i = 0; i < bins_.size(); i++) {
    const Bin& b = bins_[i];
    if (now + b.peak_rise > (peak ? peak->live_bytes : 0))
      peak = Peak{now + b.peak_rise, std::max(now_variance + b.variance_at_peak_rise, 0.0),
                  b.peak_rise_nanos != INT64_MIN ? b.peak_rise_nanos : bin_start(i)};
    now += b.live_change;
    now_variance += b.live_variance_change;
  }
  return peak;
}

TimeSeries::Bin& TimeSeries::bin(int64_t time_nanos) {
  if (bins_.empty()) bins_.resize(kBins);
  clock_.cover(time_nanos, [this](const TimeBins::Widening& moved) {
    std::vector<Bin> wider(kBins);
    for (size_t i = 0; i < kBins; i++) {
      Bin& w = wider[moved(i)];
      const Bin& b = bins_[i];
      w.allocated += b.allocated;
      if (w.live_change + b.peak_rise > w.peak_rise) {
        w.peak_rise = w.live_change + b.peak_rise;
        w.peak_rise_nanos = b.peak_rise_nanos;  // set: only an allocation raises peak_rise above live_change
        w.variance_at_peak_rise = w.live_variance_change + b.variance_at_peak_rise;
      }
      w.live_change += b.live_change;
      w.live_variance_change += b.live_variance_change;
      w.last_allocation = std::max(w.last_allocation, b.last_allocation);
    }
    bins_ = std::move(wider);
  });
  return bins_[clock_.bin(time_nanos)];
}

}  // namespace nmprof::profile
