// The agent's own memory, apart from the host's allocator. Everything the agent
// allocates (its tables, buffers, strings, symbol data, and what its static
// libstdc++ allocates) comes from here, so glibc's heap, thresholds, arenas and
// trimming see exactly the host's own calls, as without the agent.
//
// Small blocks come from size classes carved out of 1 MiB mmap'd slabs and are
// reused through free lists (never returned to the system: the agent's peak is
// small and reached early); large ones are mapped and unmapped whole. One spin lock
// guards it: the agent allocates rarely, mostly under the recorder's lock.
#pragma once

#include <cstddef>

namespace nmprof::agent_memory {

// Null when the system has no memory left (or align is not a power of two).
void* allocate(size_t size, size_t align = 16);
void* allocate_zeroed(size_t size);
// p must be null or made here (see owns()).
void* reallocate(void* p, size_t size);
void release(void* p);
// Whether p was made here; false for the host's blocks (libc may hand the agent
// a block of its own to free).
bool owns(const void* p);

// fork(): the lock is held across it, so that the child finds the free lists whole.
void before_fork();
void after_fork();
// Whether a thread is allocating or freeing (a child made without fork() that finds
// the lock held has free lists that may be half changed).
bool locked();

}  // namespace nmprof::agent_memory
