// Bytes allocated and freed over the time of a recording, kept in a fixed number of
// time bins while the recording is read, so a timeline costs the same memory however
// long the run. Bins start 1 us wide and double (neighbours merged) whenever an
// event falls outside the span they cover.
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
  int64_t bin_nanos() const { return width_; }
  const std::vector<Bin>& bins() const { return bins_; }

 private:
  Bin& bin(int64_t time_nanos);
  void widen(bool to_the_left);

  int64_t origin_ = 0;
  int64_t width_ = 1000;
  std::vector<Bin> bins_;
};

}  // namespace nmprof::profile
