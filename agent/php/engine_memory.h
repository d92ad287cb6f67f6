// Reads of the engine's structures from the sampled path: plain loads, after checks
// that a pointer is one the engine could have made (non-null, aligned, in the user
// half of the address space). The structures read are the current thread's own
// call frames, alive while the allocation that is sampled runs.
#pragma once

#include <cstdint>
#include <cstring>

namespace nmprof::php {

inline bool plausible(uintptr_t p) {
  return p >= 4096 && p < (uintptr_t{1} << 47) && (p & 7) == 0;
}

template <typename T>
T load(uintptr_t base, size_t offset) {
  T value;
  memcpy(&value, reinterpret_cast<const void*>(base + offset), sizeof value);
  return value;
}

inline uintptr_t load_pointer(uintptr_t base, size_t offset) {
  uintptr_t p = load<uintptr_t>(base, offset);
  return plausible(p) ? p : 0;
}

}  // namespace nmprof::php
