// What a recording says of a tracked block that a realloc moved or resized without
// a sample of its own (profiler.Free's newAddress, newSize, newWeight).
#pragma once

#include <cstdint>

namespace nmprof::profile {

struct Move {
  uint64_t address = 0;  // where the block lives on
  uint64_t size = 0;     // its new size
  float weight = 1;      // blocks of that size it stands for in the live view
};

}  // namespace nmprof::profile
