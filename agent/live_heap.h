// The sampled blocks that are still allocated (heap-live). Two parts:
//  - a filter that every free() consults without a lock: one byte per hash bucket
//    of addresses, non-zero when a tracked block may hash there. Nearly every free
//    is of an untracked block and costs a multiply, a shift and a load;
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
  };

  static constexpr int kFilterBits = 21;  // 2 MiB of filter, touched only where blocks hash

  // The free path's question: false means p is certainly not tracked.
  static bool maybe_tracked(const void* p) {
    return __atomic_load_n(&filter_[filter_index(p)], __ATOMIC_RELAXED) != 0;
  }

  explicit LiveHeap(size_t max_blocks) : max_blocks_(max_blocks) {}
  // False when the cap is reached (or memory ran out): the block is not tracked.
  bool insert(const Block& block);
  // Moves the block at `address` to *out and forgets it; false if it is not tracked.
  bool remove(uintptr_t address, Block* out);
  // After fork() in the child: the parent's blocks are not this process's to report.
  void clear();

  size_t blocks() const { return count_; }
  size_t max_blocks() const { return max_blocks_; }
  uint64_t untracked() const { return untracked_; }
  double live_bytes() const { return live_bytes_; }  // estimated: sum of weight * size
  size_t memory_bytes() const { return capacity_ * sizeof(Block) + (touched_filter_pages_ << 12); }

 private:
  static size_t filter_index(const void* p) {
    return static_cast<size_t>((reinterpret_cast<uintptr_t>(p) * 0x9E3779B97F4A7C15ull) >> (64 - kFilterBits));
  }
  static void filter_add(const void* p);
  static void filter_remove(const void* p);
  bool grow();
  size_t slot_of(uintptr_t address) const {
    return static_cast<size_t>((address * 0x9E3779B97F4A7C15ull) >> 20) & (capacity_ - 1);
  }

  alignas(4096) static uint8_t filter_[size_t{1} << kFilterBits];

  size_t max_blocks_;
  Block* table_ = nullptr;  // open addressing, linear probing, mmap'd
  size_t capacity_ = 0;     // slots, a power of two
  size_t count_ = 0;
  uint64_t untracked_ = 0;
  double live_bytes_ = 0;
  size_t touched_filter_pages_ = 0;  // an upper bound, for the memory report
};

}  // namespace nmprof
