// Entry points that replace malloc and friends in patched GOT slots. The path an
// allocation takes when it is not sampled: the call to the original function and
// one subtraction from a thread-local countdown.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agent/hooks/hook_events.h"
#include "agent/hooks/hook_table.h"
#include "agent/sampling/sampler.h"
#include "agent/hooks/thread_state.h"

namespace nmprof {

__attribute__((always_inline)) inline void* count_allocation(
    void* p, size_t size, jfr::schema::AllocatorKey allocator = jfr::schema::kLibc) {
  return __builtin_expect(Sampler::countdown(size), 0) ? on_sampled_allocation(p, size, allocator) : p;
}

template <int K>
struct MallocHook {
  static void* call(size_t size) {
    void* p = hook_target<void* (*)(size_t)>(kMalloc, K)(size);
    return count_allocation(p, size);
  }
};

template <int K>
struct CallocHook {
  static void* call(size_t count, size_t size) {
    void* p = hook_target<void* (*)(size_t, size_t)>(kCalloc, K)(count, size);
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) total = 0;  // failed anyway
    return count_allocation(p, total);
  }
};

// A realloc frees its old block (unless it fails) and counts as an allocation of its
// new size, in place or not: the live estimate stays unbiased either way.
template <typename Realloc>
__attribute__((noinline)) void* realloc_tracked(void* old, size_t size, Realloc call,
                                                jfr::schema::AllocatorKey allocator = jfr::schema::kLibc) {
  TakenBlock taken;
  bool was_tracked = take_tracked_block(old, &taken);
  void* p = call();
  if (was_tracked) settle_taken_block(taken, p != nullptr || size == 0);
  return count_allocation(p, size, allocator);
}

template <int K>
struct ReallocHook {
  static void* call(void* old, size_t size) {
    auto realloc_fn = hook_target<void* (*)(void*, size_t)>(kRealloc, K);
    if (__builtin_expect(LiveHeap::maybe_tracked(old), 0))
      return realloc_tracked(old, size, [&] { return realloc_fn(old, size); });
    return count_allocation(realloc_fn(old, size), size);
  }
};

// glibc's reallocarray calls realloc through its own PLT, whose hook must not count
// the same allocation again: the call runs with sampling suspended, as agent code does.
template <int K>
struct ReallocarrayHook {
  static void* call(void* old, size_t count, size_t size) {
    auto reallocarray_fn = hook_target<void* (*)(void*, size_t, size_t)>(kReallocarray, K);
    auto uncounted = [&] {
      AgentGuard not_counted_twice;
      return reallocarray_fn(old, count, size);
    };
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) total = 0;
    if (__builtin_expect(LiveHeap::maybe_tracked(old), 0)) return realloc_tracked(old, total, uncounted);
    return count_allocation(uncounted(), total);
  }
};

// Patched only when frees are tracked. Nearly every free is of an untracked block:
// the filter says so in a few instructions, then the original free is tail-called.
template <int K>
struct FreeHook {
  static void call(void* p) {
    if (__builtin_expect(LiveHeap::maybe_tracked(p), 0)) on_tracked_free(p);
    hook_target<void (*)(void*)>(kFree, K)(p);
  }
};

template <int K>
struct PosixMemalignHook {
  static int call(void** out, size_t alignment, size_t size) {
    int result = hook_target<int (*)(void**, size_t, size_t)>(kPosixMemalign, K)(out, alignment, size);
    if (result == 0) count_allocation(*out, size);
    return result;
  }
};

// aligned_alloc, memalign: (alignment, size).
template <HookId Id, int K>
struct AlignedHook {
  static void* call(size_t alignment, size_t size) {
    void* p = hook_target<void* (*)(size_t, size_t)>(Id, K)(alignment, size);
    return count_allocation(p, size);
  }
};
template <int K>
using AlignedAllocHook = AlignedHook<kAlignedAlloc, K>;
template <int K>
using MemalignHook = AlignedHook<kMemalign, K>;

// valloc, pvalloc: page-aligned (pvalloc rounds the size up to whole pages).
template <HookId Id, int K>
struct PageAlignedHook {
  static void* call(size_t size) {
    void* p = hook_target<void* (*)(size_t)>(Id, K)(size);
    return count_allocation(p, size);
  }
};
template <int K>
using VallocHook = PageAlignedHook<kValloc, K>;
template <int K>
using PvallocHook = PageAlignedHook<kPvalloc, K>;

}  // namespace nmprof
