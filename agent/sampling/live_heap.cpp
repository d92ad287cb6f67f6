#include "agent/sampling/live_heap.h"

#include <sys/mman.h>

#include <cstddef>
#include <cstring>

namespace nmprof {

LiveHeap::InitialFilter LiveHeap::initial_filter_;
LiveHeap::Filter* LiveHeap::filter_ = reinterpret_cast<LiveHeap::Filter*>(&LiveHeap::initial_filter_);

namespace {

constexpr size_t kInitialSlots = 4096;
constexpr size_t kBucketsPerBlock = 16;
constexpr unsigned kMaxFilterBits = 24;  // 16 MiB: over a million tracked blocks

LiveHeap::Block* map_slots(size_t slots) {
  void* p = mmap(nullptr, slots * sizeof(LiveHeap::Block), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<LiveHeap::Block*>(p);
}

}  // namespace

void LiveHeap::filter_add(Filter* f, const void* p) {
  uint8_t& counter = f->counters[f->index(p)];
  // A saturated counter stays: its bucket then always asks the table, which is correct.
  if (counter != 0xff) __atomic_store_n(&counter, static_cast<uint8_t>(counter + 1), __ATOMIC_RELAXED);
}

void LiveHeap::filter_remove(Filter* f, const void* p) {
  uint8_t& counter = f->counters[f->index(p)];
  if (counter != 0xff && counter != 0) __atomic_store_n(&counter, static_cast<uint8_t>(counter - 1), __ATOMIC_RELAXED);
}

void LiveHeap::grow_filter_if_crowded() {
  unsigned bits = 64 - filter_->shift;
  if (count_ * kBucketsPerBlock <= filter_->buckets() || bits >= kMaxFilterBits) return;
  unsigned new_bits = bits + 2;
  size_t size = offsetof(Filter, counters) + (size_t{1} << new_bits);
  void* memory = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return;  // the old filter stays correct, only slower
  auto* bigger = static_cast<Filter*>(memory);
  bigger->shift = 64 - new_bits;
  for (size_t i = 0; i < capacity_; i++)
    if (table_[i].address) filter_add(bigger, reinterpret_cast<const void*>(table_[i].address));
  retired_filter_bytes_ += filter_->buckets();
  __atomic_store_n(&filter_, bigger, __ATOMIC_RELEASE);
}

bool LiveHeap::grow() {
  size_t slots = capacity_ ? capacity_ * 2 : kInitialSlots;
  Block* table = map_slots(slots);
  if (!table) return false;
  Block* old = table_;
  size_t old_capacity = capacity_;
  table_ = table;
  capacity_ = slots;
  for (size_t i = 0; i < old_capacity; i++) {
    if (!old[i].address) continue;
    size_t j = slot_of(old[i].address);
    while (table_[j].address) j = (j + 1) & (capacity_ - 1);
    table_[j] = old[i];
  }
  if (old) munmap(old, old_capacity * sizeof(Block));
  return true;
}

bool LiveHeap::insert(const Block& block) {
  if (count_ >= max_blocks_ || ((count_ + 1) * 2 > capacity_ && !grow())) {
    untracked_++;
    return false;
  }
  size_t i = slot_of(block.address);
  while (table_[i].address && table_[i].address != block.address) i = (i + 1) & (capacity_ - 1);
  if (table_[i].address) {
    // The same address again: its old block was freed by a path we do not see.
    live_bytes_ -= static_cast<double>(table_[i].weight) * static_cast<double>(table_[i].size);
    count_--;
    by_allocator_[table_[i].allocator % kAllocators]--;
  } else {
    filter_add(filter_, reinterpret_cast<const void*>(block.address));
  }
  table_[i] = block;
  count_++;
  by_allocator_[block.allocator % kAllocators]++;
  grow_filter_if_crowded();
  live_bytes_ += static_cast<double>(block.weight) * static_cast<double>(block.size);
  return true;
}

bool LiveHeap::remove(uintptr_t address, Block* out) {
  if (!capacity_ || !address) return false;
  size_t i = slot_of(address);
  while (table_[i].address != address) {
    if (!table_[i].address) return false;
    i = (i + 1) & (capacity_ - 1);
  }
  *out = table_[i];
  live_bytes_ -= static_cast<double>(out->weight) * static_cast<double>(out->size);
  count_--;
  by_allocator_[out->allocator % kAllocators]--;
  filter_remove(filter_, reinterpret_cast<const void*>(address));
  // Backward-shift deletion keeps every probe chain unbroken without tombstones.
  size_t hole = i;
  for (size_t j = (i + 1) & (capacity_ - 1); table_[j].address; j = (j + 1) & (capacity_ - 1)) {
    size_t home = slot_of(table_[j].address);
    // Move j into the hole unless its home lies cyclically in (hole, j].
    bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays) continue;
    table_[hole] = table_[j];
    hole = j;
  }
  table_[hole].address = 0;
  return true;
}

void LiveHeap::clear() {
  if (table_) munmap(table_, capacity_ * sizeof(Block));
  table_ = nullptr;
  capacity_ = count_ = 0;
  for (size_t& n : by_allocator_) n = 0;
  untracked_ = 0;
  live_bytes_ = 0;
  memset(filter_->counters, 0, filter_->buckets());
}

size_t LiveHeap::memory_bytes() const {
  return capacity_ * sizeof(Block) + filter_->buckets() + retired_filter_bytes_;
}

}  // namespace nmprof
