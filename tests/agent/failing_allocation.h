// Allocation failures injected into a test program, as an address-space limit
// (ulimit -v) makes them: once armed, the n-th allocation and every one after it
// fails, whether a mapping (mmap: the agent's own memory, its byte buffers, the live
// heap) or a block of the heap (malloc, calloc, operator new: what the agent's unit
// tests allocate through libc). The program that includes this defines the
// interposed functions once (failing_allocation.cpp).
#pragma once

#include <cstdint>

namespace nmprof::testing {

// From now on, allocations fail from the n-th (0: the next one) on.
void fail_allocations_from(int64_t n);
// Allocations succeed again; returns whether any failed since fail_allocations_from().
bool stop_failing_allocations();

}  // namespace nmprof::testing
