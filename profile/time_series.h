// Bytes allocated and freed over the time of a recording, kept in kBins time bins
// (TimeBins) while the recording is read, so a timeline costs the same memory however
// long the run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "profile/time_bins.h"

namespace nmprof::profile {

class TimeSeries {
 public:
  static constexpr size_t kBins = 4096;

  struct Bin {
    double allocated = 0;    // bytes of samples taken in the bin
    double live_change = 0;  // bytes that became live, less those freed
    double live_variance_change = 0;  // the same of the estimates' variances (Totals)
    // The most live_change reached on the way, and when it was first reached (exact when
    // events came in time order; INT64_MIN: at the bin's start), with live_variance_change then.
    double peak_rise = 0;
    int64_t peak_rise_nanos = INT64_MIN;
    double variance_at_peak_rise = 0;
    int64_t last_allocation = INT64_MIN;  // when the latest sample of the bin was taken
  };

  // The most bytes live at once, and when that was first reached.
  struct Peak {
    double live_bytes = 0;
    double live_bytes_variance = 0;  // of the estimate live_bytes
    int64_t time_nanos = 0;
  };

  void allocated(int64_t time_nanos, double bytes);
  // Bytes that became live (a sample paired with its free or its process's end; a
  // block a realloc moved), with the variance of their estimate.
  void became_live(int64_t time_nanos, double bytes, double bytes_variance);
  void freed(int64_t time_nanos, double bytes, double bytes_variance);

  bool empty() const { return bins_.empty(); }
  int64_t start_nanos() const { return clock_.start_nanos(); }
  int64_t bin_nanos() const { return clock_.bin_nanos(); }
  // When bin i begins.
  int64_t bin_start(size_t i) const { return clock_.bin_start(i); }
  const std::vector<Bin>& bins() const { return bins_; }
  // Nothing when nothing was ever live.
  std::optional<Peak> live_peak() const;

 private:
  Bin& bin(int64_t time_nanos);

  TimeBins clock_{kBins};
  std::vector<Bin> bins_;
};

}  // namespace nmprof::profile
