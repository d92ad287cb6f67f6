// Entry points that replace malloc and friends in patched GOT slots. The path an
// allocation takes when it is not sampled: one subtraction from a thread-local
// countdown and the original function.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agent/hooks/block_sizes.h"
#include "agent/hooks/hook_events.h"
#include "agent/hooks/hook_table.h"
#include "agent/sampling/sampler.h"
#include "agent/threads/thread_state.h"

namespace nmprof {

__attribute__((always_inline)) inline void* count_allocation(
    void* p, size_t size, jfr::schema::AllocatorKey allocator = jfr::schema::kLibc) {
  return __builtin_expect(Sampler::countdown(size), 0) ? on_sampled_allocation(p, size, allocator) : p;
}

// The allocation whose countdown crossed zero: made, then sampled.
template <typename Allocate, typename... Args>
__attribute__((noinline)) void* allocate_sampled(Allocate allocate, size_t size, Args... args) {
  return on_sampled_allocation(allocate(args...), size, jfr::schema::kLibc);
}

// The countdown first, so that an allocation that is not sampled tail-calls the
// original: the hook adds a subtraction, a branch and a jump (with the TLS offset's
// load), and the original returns straight to the program.
template <typename Allocate, typename... Args>
__attribute__((always_inline)) inline void* allocate_counted(Allocate allocate, size_t size, Args... args) {
  if (__builtin_expect(!Sampler::countdown(size), 1)) return allocate(args...);
  return allocate_sampled(allocate, size, args...);
}

template <int K>
struct MallocHook {
  static void* call(size_t size) { return allocate_counted(hook_target<void* (*)(size_t)>(kMalloc, K), size, size); }
};

template <int K>
struct CallocHook {
  static void* call(size_t count, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) total = 0;  // fails anyway
    return allocate_counted(hook_target<void* (*)(size_t, size_t)>(kCalloc, K), total, count, size);
  }
};

// A realloc counts what it adds to its block: growing it from `before` bytes (as its
// allocator counts, see counted_from) to `size`, it counts size - before, and is
// sampled as an allocation of that many bytes would be; shrinking, it counts nothing
// and is never sampled. A sample still records the whole block, with the weight a
// block has in the live view: one over its odds of being tracked. A block found
// untracked has been counted, over its life, by at most its usable size before the
// call plus what the call added (counted_over_life); a tracked block's odds go on
// from its own weight (LiveHeap::resized_weight).
// block_size(p): the usable size of a block of the realloc's allocator (0: unknown).
template <typename BlockSize>
__attribute__((always_inline)) inline void* count_growth(void* p, size_t usable_before, size_t size,
                                                         BlockSize block_size, jfr::schema::AllocatorKey allocator) {
  if (!p) return p;
  size_t usable_after = block_size(p);
  size_t before = counted_from(usable_before, usable_after, size);
  if (__builtin_expect(!Sampler::countdown(growth(before, size)), 1)) return p;
  return on_sampled_allocation(p, size, allocator, before,
                               counted_over_life(usable_before, usable_after, before, size));
}

// A tracked block is taken out before the call; after it, the block is freed (the
// realloc is sampled: its sample tracks the new block; or its allocator's sizes are
// unknown), moved with its new size (not sampled), or put back (the realloc failed).
// In a heap no other thread allocates from (kOwnHeap: ZendMM's), no block can be
// made at its address during the call: it is taken after it, and a block that grew
// where it was (a string appended to in a loop) is resized in one look-up instead.
template <bool kOwnHeap = false, typename Realloc, typename BlockSize>
__attribute__((noinline)) void* realloc_tracked(void* old, size_t usable_before, size_t size, Realloc call,
                                                BlockSize block_size,
                                                jfr::schema::AllocatorKey allocator = jfr::schema::kLibc) {
  TakenBlock taken;
  bool was_tracked = !kOwnHeap && take_tracked_block(old, &taken);
  void* p = call();
  size_t usable_after = p ? block_size(p) : 0;
  size_t before = p ? counted_from(usable_before, usable_after, size) : size;
  size_t counted = counted_over_life(usable_before, usable_after, before, size);
  size_t added = growth(before, size);
  bool sampled = p && adds_bytes(before, size) && Sampler::countdown(added) && Sampler::confirm(t_state, added);
  if constexpr (kOwnHeap) {
    if (p == old && !sampled && counted && usable_after >= usable_before && grow_in_place(p, size, added, counted))
      return p;
    was_tracked = take_tracked_block(old, &taken);
  }
  if (was_tracked) {
    if (p && !sampled && counted)
      move_taken_block(taken, p, size, added, counted);
    else
      settle_taken_block(taken, p != nullptr || size == 0);
  }
  if (!sampled) return p;
  return on_sampled_allocation(p, size, allocator, before, counted, was_tracked && counted ? taken.block.weight : 0);
}

template <int K>
struct ReallocHook {
  static void* call(void* old, size_t size) {
    auto realloc_fn = hook_target<void* (*)(void*, size_t)>(kRealloc, K);
    auto usable = [](void* p) { return block_size(kRealloc, K, p); };
    size_t before = usable(old);
    if (__builtin_expect(LiveHeap::maybe_tracked(old), 0))
      return realloc_tracked(old, before, size, [&] { return realloc_fn(old, size); }, usable);
    return count_growth(realloc_fn(old, size), before, size, usable, jfr::schema::kLibc);
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
    auto usable = [](void* p) { return block_size(kReallocarray, K, p); };
    size_t total;
    // It fails (ENOMEM) and leaves the block as it was: nothing to count or follow.
    if (__builtin_mul_overflow(count, size, &total)) return uncounted();
    size_t before = usable(old);
    if (__builtin_expect(LiveHeap::maybe_tracked(old), 0))
      return realloc_tracked(old, before, total, uncounted, usable);
    return count_growth(uncounted(), before, total, usable, jfr::schema::kLibc);
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
    return allocate_counted(hook_target<void* (*)(size_t, size_t)>(Id, K), size, alignment, size);
  }
};
template <int K>
using AlignedAllocHook = AlignedHook<kAlignedAlloc, K>;
template <int K>
using MemalignHook = AlignedHook<kMemalign, K>;

// valloc, pvalloc: page-aligned (pvalloc rounds the size up to whole pages).
template <HookId Id, int K>
struct PageAlignedHook {
  static void* call(size_t size) { return allocate_counted(hook_target<void* (*)(size_t)>(Id, K), size, size); }
};
template <int K>
using VallocHook = PageAlignedHook<kValloc, K>;
template <int K>
using PvallocHook = PageAlignedHook<kPvalloc, K>;

}  // namespace nmprof
