// The sampled blocks that are still allocated (heap-live). Two parts:
//  - a filter that every free() consults without a lock: one counter byte per hash
//    bucket of addresses, non-zero when a tracked block may hash there. Nearly every
//    free is of an untracked block and costs a multiply, a shift and two loads. It
//    starts at one page, so it stays in the L1 cache, and grows (published like RCU,
//    old ones kept) when so many blocks are tracked that false hits would add up;
//  - the table of tracked blocks, in shards by address, each with its own lock, so
//    that threads freeing different blocks rarely wait for each other. It grows with
//    use up to a cap; when full, further samples are counted as untracked. Shards
//    claim their share of the cap in small batches, so that counting against it
//    does not make threads share one cache line on every insert. A realloc marks
//    the block it changes taken (other threads do not see it while the call runs),
//    and one that resized it in place marks it resized: the recording says the new
//    sizes at its next write (take_resized), not at every realloc.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "agent/safety/spin_lock.h"
#include "formats/jfr/nmprof_schema.h"

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
    // The thread whose realloc has it (take), 0: none. Other threads do not see it:
    // its address may be freed by the call and be another block's before the
    // realloc's thread has said where it went.
    int taken_by = 0;
    // When the last realloc that changed its size in place since the recording last
    // said it was called (ticks; 0: none): the next write says the size then
    // (take_resized), rather than an event per realloc.
    uint64_t resized_at = 0;
  };
  static constexpr size_t kAllocators = jfr::schema::kAllocatorCount;

  // The free path's question: false means p is certainly not tracked.
  static bool maybe_tracked(const void* p) {
    const Filter* f = __atomic_load_n(&filter_, __ATOMIC_ACQUIRE);
    return __atomic_load_n(&f->counters[f->index(p)], __ATOMIC_RELAXED) != 0;
  }

  explicit LiveHeap(size_t max_blocks);
  ~LiveHeap();
  LiveHeap(const LiveHeap&) = delete;
  LiveHeap& operator=(const LiveHeap&) = delete;

  // `self`: the caller's thread id. A thread that interrupted the heap (a signal
  // handler) is refused rather than deadlocked: insert() then counts the block as
  // untracked, remove() does not find it.
  // False when the cap is reached (or memory ran out): the block is not tracked.
  bool insert(const Block& block, int self);
  // Moves the block at `address` to *out and forgets it; false if it is not tracked.
  bool remove(uintptr_t address, Block* out, int self);
  // realloc: marks the block at `address` taken by this thread (a copy in *out); false
  // if it is not tracked. After the call, the block is put back as it was, resized
  // in place (marked resized at `at`), or removed (false: it was forgotten meanwhile).
  bool take(uintptr_t address, Block* out, int self);
  void put_back(uintptr_t address, int self);
  bool resize_taken(uintptr_t address, uint64_t size, float weight, uint64_t at, int self);
  bool remove_taken(uintptr_t address, int self);
  // A realloc that grew the block at `address` where it was, in a heap no other thread
  // allocates from (nothing could take its address meanwhile): resized as
  // resize_taken() does, without taking it first, to the weight resized_weight() gives.
  // False when its weight would grow (then take it: a block that lost weight keeps
  // its tracking only with odds).
  bool grow(uintptr_t address, uint64_t size, float added, float resized, uint64_t at, int self);

  // The live weight of a tracked block of weight `tracked` (one over its odds of being
  // tracked) after a realloc. One that added bytes of sample weight `added` leaves it
  // tracked if it was, or if those bytes were sampled: its odds are then
  // 1 - (1 - 1/tracked)(1 - 1/added). One that added nothing (added = 0: it shrank, or
  // grew within its usable size) leaves its odds as they were, unless a block of its
  // new size (weight `resized`) would have fewer: it is then kept with the odds of
  // that weight against its old one (the caller draws them) and weighs `resized`.
  // Weighing a block by its usable size alone undercounted one that malloc counted by
  // fewer bytes: malloc(1) then realloc to 24 bytes weighed 24 times too little.
  static float resized_weight(float tracked, float added, float resized) {
    if (added == 0) return tracked > resized ? tracked : resized;
    double missed = (1.0 - 1.0 / static_cast<double>(tracked)) * (1.0 - 1.0 / static_cast<double>(added));
    return static_cast<float>(1.0 / (1.0 - missed));
  }
  // After fork() in the child, or at a restart: the blocks are not the new file's to
  // report. Each shard is cleared under its lock: a realloc or free that began before
  // a restart may still be looking at it.
  void clear(int self);
  // Forgets every block of `allocator`, calling forgotten(address) for each, with
  // no lock held: a runtime freed them all at once (PHP's heap at a request's end).
  template <typename Forgotten>
  void remove_all_of(uint8_t allocator, int self, Forgotten forgotten);
  // Calls visit(block) for every block marked resized, with no lock held, and
  // clears the marks.
  template <typename Visit>
  void take_resized(int self, Visit visit);
  // fork(): every shard is held across it, so that the child finds them whole.
  void before_fork(int self);
  void after_fork();
  // Whether `self` is inside the heap (a signal handler interrupted it).
  bool owned_by(int self) const;
  bool locked() const;  // any shard, by any thread

  size_t blocks() const;
  size_t blocks_of(uint8_t allocator) const {
    return by_allocator_[allocator % kAllocators].load(std::memory_order_relaxed);
  }
  size_t max_blocks() const { return max_blocks_; }
  uint64_t untracked() const { return untracked_.load(std::memory_order_relaxed); }
  double live_bytes() const;  // estimated: sum of weight * size
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
  struct alignas(64) Shard {
    SpinLock lock;
    Block* table = nullptr;  // open addressing, linear probing, mmap'd
    size_t capacity = 0;     // slots, a power of two
    size_t reserve = 0;  // claimed from the cap, not used yet
    // Changed under the lock, read without it (statistics).
    std::atomic<size_t> count{0};
    std::atomic<size_t> resized{0};  // blocks marked resized
    std::atomic<double> live_bytes{0};
    std::atomic<size_t> table_bytes{0};

    bool grow();
    void add_live(double bytes) {
      live_bytes.store(live_bytes.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
    }
    size_t slot_of(uintptr_t address) const {
      return static_cast<size_t>((address * 0x9E3779B97F4A7C15ull) >> 20) & (capacity - 1);
    }
  };
  static constexpr size_t kShards = 16;

  // Shards by the top bits of the address's hash; slots use lower bits of it.
  Shard& shard_of(uintptr_t address) {
    return shards_[static_cast<size_t>((address * 0x9E3779B97F4A7C15ull) >> 60) % kShards];
  }
  // Counters of several shards share bytes: changed with atomic read-modify-writes.
  static void filter_add(Filter* f, const void* p);
  static void filter_remove(Filter* f, const void* p);
  // Keeps false hits rare: at least 16 buckets per tracked block. Takes every shard.
  void grow_filter(int self, const Filter* seen);
  // Removes up to `max` blocks of `allocator` from one shard into `out`; how many.
  size_t take_blocks_of(Shard& s, uint8_t allocator, int self, uintptr_t* out, size_t max);
  // Copies up to `max` blocks marked resized of one shard into `out`, clearing their
  // marks; how many.
  size_t take_resized_of(Shard& s, int self, Block* out, size_t max);
  static void count_resized(Shard& s, const Block& block, int change);
  // In a locked shard: the slot of the block at `address` taken by `taken_by` (0: not
  // taken), else the empty slot that ends its probe chain.
  static size_t slot_for(const Shard& s, uintptr_t address, int taken_by);
  // Under the lock of the shard of `address`: change(shard, slot) for the block at
  // `address` taken by `taken_by` (0: not taken); false when there is none (or the
  // shard is this thread's already: a signal handler interrupted it).
  template <typename Change>
  bool change_block(uintptr_t address, int taken_by, int self, Change change);
  // Empties slot i of a locked shard, keeping its probe chains whole.
  void remove_slot(Shard& s, size_t i, Block* out);
  void resize_slot(Shard& s, size_t i, uint64_t size, float weight, uint64_t at);
  bool claim(Shard& s);        // one more block's room from the cap
  void give_back(Shard& s);    // a block's room returned
  bool lock_all(int self);
  void unlock_all();

  static InitialFilter initial_filter_;
  // Hidden: read in one instruction (not through the GOT) by every free.
  __attribute__((visibility("hidden"))) static Filter* filter_;  // written with every shard held
  std::atomic<size_t> retired_filter_bytes_{0};  // filters replaced by bigger ones (kept: a free may be reading one)

  size_t max_blocks_;
  size_t batch_;  // what a shard claims at once
  Shard shards_[kShards];
  std::atomic<size_t> unclaimed_;
  std::atomic<uint64_t> untracked_{0};
  std::atomic<size_t> by_allocator_[kAllocators] = {};
};

template <typename Forgotten>
void LiveHeap::remove_all_of(uint8_t allocator, int self, Forgotten forgotten) {
  uintptr_t batch[64];
  for (size_t shard = 0; shard < kShards && blocks_of(allocator); shard++) {
    size_t n;
    do {
      n = take_blocks_of(shards_[shard], allocator, self, batch, 64);
      for (size_t i = 0; i < n; i++) forgotten(batch[i]);
    } while (n == 64);
  }
}

template <typename Visit>
void LiveHeap::take_resized(int self, Visit visit) {
  Block batch[32];
  for (Shard& s : shards_) {
    size_t n;
    do {
      n = take_resized_of(s, self, batch, 32);
      for (size_t i = 0; i < n; i++) visit(batch[i]);
    } while (n == 32);
  }
}

}  // namespace nmprof
