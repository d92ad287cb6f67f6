#include "agent/sampling/live_heap.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace nmprof {

LiveHeap::InitialFilter LiveHeap::initial_filter_;
LiveHeap::Filter* LiveHeap::filter_ = reinterpret_cast<LiveHeap::Filter*>(&LiveHeap::initial_filter_);

namespace {

constexpr size_t kInitialSlots = 256;  // per shard
constexpr size_t kBucketsPerBlock = 16;
constexpr unsigned kMaxFilterBits = 24;  // 16 MiB: over a million tracked blocks

LiveHeap::Block* map_slots(size_t slots) {
  void* p = mmap(nullptr, slots * sizeof(LiveHeap::Block), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<LiveHeap::Block*>(p);
}

}  // namespace

// Batches stay small next to the cap, so that shards rarely refuse a block while
// others hold unused room (never with a cap below 128).
LiveHeap::LiveHeap(size_t max_blocks)
    : max_blocks_(max_blocks), batch_(std::clamp<size_t>(max_blocks / (kShards * 8), 1, 64)), unclaimed_(max_blocks) {}

LiveHeap::~LiveHeap() {
  for (Shard& s : shards_)
    if (s.table) munmap(s.table, s.capacity * sizeof(Block));
}

// A saturated counter stays: its bucket then always asks the table, which is correct.
void LiveHeap::filter_add(Filter* f, const void* p) {
  uint8_t* counter = &f->counters[f->index(p)];
  uint8_t value = __atomic_load_n(counter, __ATOMIC_RELAXED);
  while (value != 0xff && !__atomic_compare_exchange_n(counter, &value, static_cast<uint8_t>(value + 1), true,
                                                       __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

void LiveHeap::filter_remove(Filter* f, const void* p) {
  uint8_t* counter = &f->counters[f->index(p)];
  uint8_t value = __atomic_load_n(counter, __ATOMIC_RELAXED);
  while (value != 0xff && value != 0 &&
         !__atomic_compare_exchange_n(counter, &value, static_cast<uint8_t>(value - 1), true, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
  }
}

bool LiveHeap::lock_all(int self) {
  if (owned_by(self)) return false;
  for (Shard& s : shards_) s.lock.lock(self);
  return true;
}

void LiveHeap::unlock_all() {
  for (Shard& s : shards_) s.lock.unlock();
}

void LiveHeap::before_fork(int self) {
  for (Shard& s : shards_)
    if (s.lock.owner() != self) s.lock.lock(self);
}

void LiveHeap::after_fork() { unlock_all(); }

bool LiveHeap::locked() const {
  for (const Shard& s : shards_)
    if (s.lock.owner() != 0) return true;
  return false;
}

bool LiveHeap::owned_by(int self) const {
  for (const Shard& s : shards_)
    if (s.lock.owner() == self) return true;
  return false;
}

size_t LiveHeap::blocks() const {
  size_t sum = 0;
  for (const Shard& s : shards_) sum += s.count.load(std::memory_order_relaxed);
  return sum;
}

bool LiveHeap::claim(Shard& s) {
  if (s.reserve == 0) {
    size_t left = unclaimed_.load(std::memory_order_relaxed);
    do {
      if (left == 0) return false;
    } while (!unclaimed_.compare_exchange_weak(left, left - std::min(left, batch_), std::memory_order_relaxed));
    s.reserve = std::min(left, batch_);
  }
  s.reserve--;
  return true;
}

void LiveHeap::give_back(Shard& s) {
  s.reserve++;
  if (s.reserve < 2 * batch_ && batch_ > 1) return;
  unclaimed_.fetch_add(s.reserve - (batch_ - 1), std::memory_order_relaxed);
  s.reserve = batch_ - 1;
}

// `seen`: the filter found crowded; another thread may have replaced it meanwhile.
void LiveHeap::grow_filter(int self, const Filter* seen) {
  if (!lock_all(self)) return;
  if (filter_ == seen) {
    unsigned new_bits = 64 - filter_->shift + 2;
    size_t size = offsetof(Filter, counters) + (size_t{1} << new_bits);
    void* memory = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory != MAP_FAILED) {  // else the old filter stays correct, only slower
      auto* bigger = static_cast<Filter*>(memory);
      bigger->shift = 64 - new_bits;
      for (Shard& s : shards_)
        for (size_t i = 0; i < s.capacity; i++)
          if (s.table[i].address) filter_add(bigger, reinterpret_cast<const void*>(s.table[i].address));
      retired_filter_bytes_.fetch_add(filter_->buckets(), std::memory_order_relaxed);
      __atomic_store_n(&filter_, bigger, __ATOMIC_RELEASE);
    }
  }
  unlock_all();
}

bool LiveHeap::Shard::grow() {
  size_t slots = capacity ? capacity * 2 : kInitialSlots;
  Block* bigger = map_slots(slots);
  if (!bigger) return false;
  Block* old = table;
  size_t old_capacity = capacity;
  table = bigger;
  capacity = slots;
  for (size_t i = 0; i < old_capacity; i++) {
    if (!old[i].address) continue;
    size_t j = slot_of(old[i].address);
    while (table[j].address) j = (j + 1) & (capacity - 1);
    table[j] = old[i];
  }
  if (old) munmap(old, old_capacity * sizeof(Block));
  table_bytes.store(capacity * sizeof(Block), std::memory_order_relaxed);
  return true;
}

bool LiveHeap::insert(const Block& block, int self) {
  Shard& s = shard_of(block.address);
  if (s.lock.owner() == self) {
    untracked_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  s.lock.lock(self);
  size_t count = s.count.load(std::memory_order_relaxed);
  if (((count + 1) * 2 > s.capacity && !s.grow())) {
    s.lock.unlock();
    untracked_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  size_t i = slot_for(s, block.address, 0);
  if (s.table[i].address) {
    // The same address again: its old block was freed by a path we do not see.
    s.add_live(-static_cast<double>(s.table[i].weight) * static_cast<double>(s.table[i].size));
    by_allocator_[s.table[i].allocator % kAllocators].fetch_sub(1, std::memory_order_relaxed);
    count_resized(s, s.table[i], -1);
  } else if (claim(s)) {
    filter_add(filter_, reinterpret_cast<const void*>(block.address));
    s.count.store(++count, std::memory_order_relaxed);
  } else {
    s.lock.unlock();
    untracked_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  s.table[i] = block;
  by_allocator_[block.allocator % kAllocators].fetch_add(1, std::memory_order_relaxed);
  count_resized(s, block, 1);
  s.add_live(static_cast<double>(block.weight) * static_cast<double>(block.size));
  s.lock.unlock();
  // Hashes spread blocks evenly over the shards: this one's count tells the total.
  // Acquire: another thread may just have published a bigger filter (TSan saw its
  // shift read before grow_filter's writes were visible).
  const Filter* f = __atomic_load_n(&filter_, __ATOMIC_ACQUIRE);
  if (count * kShards * kBucketsPerBlock > f->buckets() && 64 - f->shift < kMaxFilterBits) grow_filter(self, f);
  return true;
}

size_t LiveHeap::slot_for(const Shard& s, uintptr_t address, int taken_by) {
  size_t i = s.slot_of(address);
  while (s.table[i].address && (s.table[i].address != address || s.table[i].taken_by != taken_by))
    i = (i + 1) & (s.capacity - 1);
  return i;
}

template <typename Change>
bool LiveHeap::change_block(uintptr_t address, int taken_by, int self, Change change) {
  Shard& s = shard_of(address);
  if (!address || s.lock.owner() == self) return false;
  s.lock.lock(self);
  size_t i = s.capacity ? slot_for(s, address, taken_by) : 0;
  bool found = s.capacity && s.table[i].address;
  if (found) change(s, i);
  s.lock.unlock();
  return found;
}

bool LiveHeap::remove(uintptr_t address, Block* out, int self) {
  return change_block(address, 0, self, [&](Shard& s, size_t i) { remove_slot(s, i, out); });
}

bool LiveHeap::take(uintptr_t address, Block* out, int self) {
  return change_block(address, 0, self, [&](Shard& s, size_t i) {
    *out = s.table[i];
    s.table[i].taken_by = self;
  });
}

void LiveHeap::put_back(uintptr_t address, int self) {
  change_block(address, self, self, [](Shard& s, size_t i) { s.table[i].taken_by = 0; });
}

bool LiveHeap::resize_taken(uintptr_t address, uint64_t size, float weight, uint64_t at, int self) {
  return change_block(address, self, self, [&](Shard& s, size_t i) { resize_slot(s, i, size, weight, at); });
}

bool LiveHeap::grow(uintptr_t address, uint64_t size, float added, float resized, uint64_t at, int self) {
  bool heavier = false;
  change_block(address, 0, self, [&](Shard& s, size_t i) {
    float weight = resized_weight(s.table[i].weight, added, resized);
    heavier = weight > s.table[i].weight;
    if (!heavier) resize_slot(s, i, size, weight, at);
  });
  return !heavier;
}

void LiveHeap::resize_slot(Shard& s, size_t i, uint64_t size, float weight, uint64_t at) {
  Block& b = s.table[i];
  s.add_live(static_cast<double>(weight) * static_cast<double>(size) -
             static_cast<double>(b.weight) * static_cast<double>(b.size));
  b.size = size;
  b.weight = weight;
  b.taken_by = 0;
  bool newly_resized = !b.resized_at;
  b.resized_at = at;
  if (newly_resized) count_resized(s, b, 1);
}

bool LiveHeap::remove_taken(uintptr_t address, int self) {
  Block removed;
  return change_block(address, self, self, [&](Shard& s, size_t i) { remove_slot(s, i, &removed); });
}

void LiveHeap::remove_slot(Shard& s, size_t i, Block* out) {
  *out = s.table[i];
  s.add_live(-static_cast<double>(out->weight) * static_cast<double>(out->size));
  s.count.store(s.count.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  by_allocator_[out->allocator % kAllocators].fetch_sub(1, std::memory_order_relaxed);
  count_resized(s, *out, -1);
  give_back(s);
  filter_remove(filter_, reinterpret_cast<const void*>(out->address));
  // Backward-shift deletion keeps every probe chain unbroken without tombstones.
  size_t hole = i;
  for (size_t j = (i + 1) & (s.capacity - 1); s.table[j].address; j = (j + 1) & (s.capacity - 1)) {
    size_t home = s.slot_of(s.table[j].address);
    // Move j into the hole unless its home lies cyclically in (hole, j].
    bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays) continue;
    s.table[hole] = s.table[j];
    hole = j;
  }
  s.table[hole].address = 0;
}

// A removal shifts later blocks back into its slot (never before it): the slot is
// looked at again until it holds another allocator's block or none.
size_t LiveHeap::take_blocks_of(Shard& s, uint8_t allocator, int self, uintptr_t* out, size_t max) {
  if (s.lock.owner() == self) return 0;
  s.lock.lock(self);
  size_t n = 0;
  for (size_t i = 0; i < s.capacity && n < max; i++) {
    while (n < max && s.table[i].address && s.table[i].allocator == allocator) {
      Block removed;
      remove_slot(s, i, &removed);
      out[n++] = removed.address;
    }
  }
  s.lock.unlock();
  return n;
}

void LiveHeap::count_resized(Shard& s, const Block& block, int change) {
  if (block.resized_at) s.resized.store(s.resized.load(std::memory_order_relaxed) + change, std::memory_order_relaxed);
}

// A block a realloc has taken is taken too: it holds its size as of its last resize,
// before the take (a thread that reallocs it again and again, or a slow realloc, has
// it taken nearly always: its size would never be written).
size_t LiveHeap::take_resized_of(Shard& s, int self, Block* out, size_t max) {
  if (s.resized.load(std::memory_order_relaxed) == 0 || s.lock.owner() == self) return 0;
  s.lock.lock(self);
  size_t n = 0;
  for (size_t i = 0; i < s.capacity && n < max; i++) {
    if (!s.table[i].address || !s.table[i].resized_at) continue;
    count_resized(s, s.table[i], -1);
    out[n++] = s.table[i];
    s.table[i].resized_at = 0;
  }
  s.lock.unlock();
  return n;
}

void LiveHeap::clear(int self) {
  for (Shard& s : shards_) {
    s.lock.lock(self);
    if (s.table) munmap(s.table, s.capacity * sizeof(Block));
    s.table = nullptr;
    s.capacity = 0;
    s.count = 0;
    s.resized = 0;
    s.reserve = 0;
    s.live_bytes = 0;
    s.table_bytes = 0;
    s.lock.unlock();
  }
  unclaimed_ = max_blocks_;
  for (auto& n : by_allocator_) n = 0;
  untracked_ = 0;
  memset(filter_->counters, 0, filter_->buckets());
}

double LiveHeap::live_bytes() const {
  double sum = 0;
  for (const Shard& s : shards_) sum += s.live_bytes.load(std::memory_order_relaxed);
  return sum;
}

size_t LiveHeap::memory_bytes() const {
  size_t tables = 0;
  for (const Shard& s : shards_) tables += s.table_bytes.load(std::memory_order_relaxed);
  return tables + __atomic_load_n(&filter_, __ATOMIC_ACQUIRE)->buckets() +
         retired_filter_bytes_.load(std::memory_order_relaxed);
}

}  // namespace nmprof
