// The sampled blocks that are still allocated (heap-live). Two parts:
//  - a filter that every free() consults without a lock: one counter byte per hash
//    bucket of addresses, non-zero when a tracked block may hash there. Nearly every
//    free is of an untracked block and costs a multiply, a shift and two loads. It
//    starts at one page, so it stays in the L1 cache, and grows (published like RCU,
//    old ones kept) when so many blocks are tracked that false hits would add up;
//  - the table of tracked blocks, guarded by the recorder's lock, growing with use
//    up to a cap. When full, further samples are counted as untracked.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace nmprof {

class LiveHeap {
 public:
  struct Block {
    uintptr_t address;  // 0 marks an empty slot
    uint64_t size;
    uint64_t ticks;     // when it was allocated
    float weight;
    uint32_t stack;
    uint8_t allocator = 0;  // the recording's allocator key (below kAllocators)
  };
  static constexpr size_t kAllocators = 4;

  // The free path's question: false means p is certainly not tracked.
  static bool maybe_tracked(const void* p) {
    const Filter* f = __atomic_load_n(&filter_, __ATOMIC_ACQUIRE);
    return __atomic_load_n(&f->counters[f->index(p)], __ATOMIC_RELAXED) != 0;
  }

  explicit LiveHeap(size_t max_blocks) : max_blocks_(max_blocks) {}
  // False when the cap is reached (or memory ran out): the block is not tracked.
  bool insert(const Block& block);
  // Moves the block at `address` to *out and forgets it; false if it is not tracked.
  bool remove(uintptr_t address, Block* out);
  // After fork() in the child: the parent's blocks are not this process's to report.
  void clear();
  // Forgets every block of `allocator`, calling forgotten(address) for each: a
  // runtime freed them all at once (PHP's heap at the end of a request).
  template <typename Forgotten>
  void remove_all_of(uint8_t allocator, Forgotten forgotten);

  size_t blocks() const { return count_; }
  size_t blocks_of(uint8_t allocator) const { return by_allocator_[allocator % kAllocators]; }
  size_t max_blocks() const { return max_blocks_; }
  uint64_t untracked() const { return untracked_; }
  double live_bytes() const { return live_bytes_; }  // estimated: sum of weight * size
  size_t memory_bytes() const;

 private:
  struct Filter {
    unsigned shift;  // 64 - log2(buckets)
    uint8_t counters[1];
    size_t index(const void* p) const {
      return static_cast<size_t>((reinterpret_cast<uintptr_t>(p) * 0x9E3779B97F4A7C15ull) >> shift);
    }
    size_t buckets() const { return size_t{1} << (64 - shift); }
  };
  struct InitialFilter {
    unsigned shift = 64 - 12;
    uint8_t counters[4096] = {};
  };

  static void filter_add(Filter* f, const void* p);
  static void filter_remove(Filter* f, const void* p);
  // Keeps false hits rare: at least 16 buckets per tracked block.
  void grow_filter_if_crowded();
  bool grow();
  size_t slot_of(uintptr_t address) const {
    return static_cast<size_t>((address * 0x9E3779B97F4A7C15ull) >> 20) & (capacity_ - 1);
  }

  static InitialFilter initial_filter_;
  static Filter* filter_;  // written under the recorder lock, read by every free
  size_t retired_filter_bytes_ = 0;  // filters replaced by bigger ones (kept: a free may be reading one)

  size_t max_blocks_;
  Block* table_ = nullptr;  // open addressing, linear probing, mmap'd
  size_t capacity_ = 0;     // slots, a power of two
  size_t count_ = 0;
  size_t by_allocator_[kAllocators] = {};
  uint64_t untracked_ = 0;
  double live_bytes_ = 0;
};

template <typename Forgotten>
void LiveHeap::remove_all_of(uint8_t allocator, Forgotten forgotten) {
  // A removal shifts later blocks back into its slot (never before it): the slot
  // is looked at again until it holds another allocator's block or none.
  for (size_t i = 0; i < capacity_ && blocks_of(allocator); i++) {
    Block removed;
    while (table_[i].address && table_[i].allocator == allocator && remove(table_[i].address, &removed))
      forgotten(removed.address);
  }
}

}  // namespace nmprof
