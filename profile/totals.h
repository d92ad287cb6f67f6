// What a profile sums per allocation, stack or view.
#pragma once

#include <cstdint>

namespace nmprof::profile {

// Estimates over samples: bytes = sum of weight * size, count = sum of weight; and the
// estimates of their variances from the sampling (docs/sampling.md): sums of
// weight * (weight - 1) * size^2 and of weight * (weight - 1), which are 0 when every
// weight is 1 (every allocation recorded).
struct Totals {
  uint64_t samples = 0;
  double bytes = 0;
  double count = 0;
  double bytes_variance = 0;
  double count_variance = 0;

  // Sums of different samples: their variances add.
  void add(const Totals& t) {
    samples += t.samples;
    bytes += t.bytes;
    count += t.count;
    bytes_variance += t.bytes_variance;
    count_variance += t.count_variance;
  }
  // Takes out what an earlier add() put in; exactly zero once no sample is left.
  void remove(const Totals& t) {
    samples -= samples < t.samples ? samples : t.samples;
    bytes = samples ? bytes - t.bytes : 0;
    count = samples ? count - t.count : 0;
    bytes_variance = samples ? bytes_variance - t.bytes_variance : 0;
    count_variance = samples ? count_variance - t.count_variance : 0;
  }
};

// One sample of `size` bytes standing for `weight` allocations. A weight below 1 (a
// damaged file's) adds no variance rather than a negative one.
inline Totals sample_totals(uint64_t size, float weight) {
  double w = static_cast<double>(weight), bytes = w * static_cast<double>(size);
  double spread = w > 1 ? w * (w - 1) : 0;
  return {1, bytes, w, spread * static_cast<double>(size) * static_cast<double>(size), spread};
}

}  // namespace nmprof::profile
