// The recording over time, as heaptrack's charts and memray's temporal view show it:
// bytes allocated per time bin (the allocation rate), estimated live bytes at the end
// of each bin, and the peak of live bytes with when it happened. Made from the
// profile's TimeSeries (filled while the recording was read, so it follows the
// report's filters); the peak and its moment are exact (TimeSeries::live_peak).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "profile/time_series.h"

namespace nmprof::report {

struct Timeline {
  int64_t start_nanos = 0;  // since the Unix epoch
  int64_t bin_nanos = 0;
  std::vector<double> allocated_bytes;  // per bin
  std::vector<double> live_bytes;       // at the end of each bin; empty without live data
  double peak_live_bytes = 0;
  double peak_live_bytes_variance = 0;  // of the estimate peak_live_bytes (sampling_error.h)
  int64_t peak_live_nanos = 0;  // since start_nanos (a report's: since the recording's start)
};

// How long after `start` `time` is (0 when not after it), whatever the two times (a
// damaged file's may be any int64).
int64_t nanos_since(int64_t start, int64_t time);

// `bins` equal bins over [start, end]; live bytes only when `live` (the recording
// tracked frees). Nothing when the span or the series is empty.
std::optional<Timeline> timeline(const profile::TimeSeries& series, bool live, int64_t start_nanos,
                                 int64_t end_nanos, size_t bins);

// "▁▂▄█" scaled to the largest value, in at most `columns` characters (neighbouring
// values averaged when there are more).
std::string sparkline(std::span<const double> values, size_t columns);

}  // namespace nmprof::report
