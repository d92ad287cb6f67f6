// Bytes allocated and freed over the time of a recording, kept in a fixed number of
// time bins while the recording is read, so a timeline costs the same memory however
// long the run. Bins start 1 us wide and double (neighbours merged) whenever an
// event falls outside the span they cover. Any int64 time fits (a damaged file's
// times may span the whole range).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nmprof::profile {

class TimeSeries {
 public:
  static constexpr size_t kBins = 4096;

  struct Bin {
    double allocated = 0;    // bytes of samples taken in the bin
    double live_change = 0;  // bytes that became live, less those freed
    double peak_rise = 0;    // the most live_change reached on the way (exact when events came in time order)
    int64_t last_allocation = INT64_MIN;  // when the latest sample of the bin was taken
  };

  void allocated(int64_t time_nanos, double bytes, bool live);
  void freed(int64_t time_nanos, double bytes);

  bool empty() const { return bins_.empty(); }
  int64_t start_nanos() const { return origin_; }
  int64_t bin_nanos() const { return static_cast<int64_t>(width_); }
  // When bin i begins.
  int64_t bin_start(size_t i) const;
  const std::vector<Bin>& bins() const { return bins_; }

 private:
  Bin& bin(int64_t time_nanos);
  void widen(bool to_the_left);
  uint64_t since_origin(int64_t time_nanos) const;  // time_nanos >= origin_

  int64_t origin_ = 0;
  uint64_t width_ = 1000;
  std::vector<Bin> bins_;
};

}  // namespace nmprof::profile
