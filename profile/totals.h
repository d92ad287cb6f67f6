// What a profile sums per allocation, stack or view.
#pragma once

#include <cstdint>

namespace nmprof::profile {

// Estimates over samples: bytes = sum of weight * size, count = sum of weight.
struct Totals {
  uint64_t samples = 0;
  double bytes = 0;
  double count = 0;

  void add(const Totals& t) {
    samples += t.samples;
    bytes += t.bytes;
    count += t.count;
  }
  // Takes out what an earlier add() put in; exactly zero once no sample is left.
  void remove(const Totals& t) {
    samples -= samples < t.samples ? samples : t.samples;
    bytes = samples ? bytes - t.bytes : 0;
    count = samples ? count - t.count : 0;
  }
};

// One sample of `size` bytes standing for `weight` allocations.
inline Totals sample_totals(uint64_t size, float weight) {
  return {1, static_cast<double>(weight) * static_cast<double>(size), static_cast<double>(weight)};
}

}  // namespace nmprof::profile
