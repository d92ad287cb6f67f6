// The recording's time base: CLOCK_MONOTONIC in nanoseconds (what the JDK uses on
// Linux), paired once with the wall clock for the chunk header.
#pragma once

#include <time.h>

#include <cstdint>

#include "formats/jfr/writing/chunk_writer.h"

namespace nmprof {

inline uint64_t monotonic_ticks() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline jfr::ChunkClock current_chunk_clock() {
  struct timespec real;
  clock_gettime(CLOCK_REALTIME, &real);
  uint64_t ticks = monotonic_ticks();
  return {static_cast<uint64_t>(real.tv_sec) * 1000000000ull + static_cast<uint64_t>(real.tv_nsec), ticks,
          1000000000ull};
}

}  // namespace nmprof
