#include "agent/sampling/sampler.h"

#include <time.h>
#include <x86intrin.h>

namespace nmprof {

void Sampler::seed(ThreadState& t, uint64_t extra) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  // Mix the cycle counter, the clock and this thread's TLS address (distinct per thread).
  uint64_t x = __rdtsc() ^ (static_cast<uint64_t>(now.tv_nsec) << 20) ^
               reinterpret_cast<uintptr_t>(&t) ^ (extra * 0x9E3779B97F4A7C15ull);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  t.random = x ? x : 0x9E3779B97F4A7C15ull;
}

}  // namespace nmprof
