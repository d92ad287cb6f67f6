#include "agent/stacks/stack_table.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace nmprof {

StackTable::~StackTable() {
  for (size_t id = 1; id <= size(); id++) free(const_cast<CallFrame*>(entry(id).frames));
  for (auto& segment : segments_) delete[] segment.load(std::memory_order_relaxed);
  for (Slots* s = slots_.load(std::memory_order_relaxed); s;) {
    Slots* replaced = s->replaced;
    free(s);
    s = replaced;
  }
}

uint64_t StackTable::hash_of(const CallStack& stack) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ stack.depth ^ (stack.truncated ? 0x100000000ull : 0);
  for (size_t i = 0; i < stack.depth; i++) {
    const CallFrame& f = stack.frames[i];
    h = (h ^ (f.id + (static_cast<uint64_t>(static_cast<uint32_t>(f.bci)) << 8) + f.type + (f.java ? 0x80 : 0) +
              (static_cast<uint64_t>(f.load) << 40))) *
        0xff51afd7ed558ccdull;
    h ^= h >> 29;
  }
  return h;
}

bool StackTable::same(const Entry& e, const CallStack& stack, uint64_t hash) {
  if (e.hash != hash || e.depth != stack.depth || e.truncated != stack.truncated) return false;
  for (size_t i = 0; i < stack.depth; i++)
    if (!(e.frames[i] == stack.frames[i])) return false;
  return true;
}

uint32_t StackTable::find(const Slots* slots, const CallStack& stack, uint64_t hash) const {
  if (!slots) return 0;
  // Never full (it grows at half), so an empty slot ends every probe.
  for (size_t i = hash & slots->mask;; i = (i + 1) & slots->mask) {
    uint32_t id = slots->ids[i].load(std::memory_order_acquire);
    if (id == 0) return 0;
    if (same(entry(id), stack, hash)) return id;
  }
}

uint32_t StackTable::intern(const CallStack& stack, int self) {
  uint64_t hash = hash_of(stack);
  if (uint32_t id = find(slots_.load(std::memory_order_acquire), stack, hash)) return id;
  if (lock_.owner() == self) return 0;
  lock_.lock(self);
  uint32_t id = add(stack, hash);
  lock_.unlock();
  return id;
}

StackTable::Slots* StackTable::grow(Slots* old) {
  size_t size = old ? (old->mask + 1) * 2 : 1024;
  size_t bytes = offsetof(Slots, ids) + size * sizeof(std::atomic<uint32_t>);
  auto* slots = static_cast<Slots*>(calloc(1, bytes));  // all ids 0 (atomics of 0 are zero bytes)
  if (!slots) return nullptr;
  slots->mask = size - 1;
  slots->replaced = old;
  for (uint32_t id = 1; id <= count_.load(std::memory_order_relaxed); id++) {
    size_t i = entry(id).hash & slots->mask;
    while (slots->ids[i].load(std::memory_order_relaxed)) i = (i + 1) & slots->mask;
    slots->ids[i].store(id, std::memory_order_relaxed);
  }
  slots_.store(slots, std::memory_order_release);
  memory_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  return slots;
}

// Under the lock. The entry is complete before its slot is published.
uint32_t StackTable::add(const CallStack& stack, uint64_t hash) {
  Slots* slots = slots_.load(std::memory_order_relaxed);
  if (uint32_t id = find(slots, stack, hash)) return id;
  size_t count = count_.load(std::memory_order_relaxed);
  if (count + 1 > kMaxSegments * kSegmentSize) return 0;
  if (!slots || (count + 1) * 2 > slots->mask + 1) {
    slots = grow(slots);
    if (!slots) return 0;
  }
  auto id = static_cast<uint32_t>(count + 1);
  std::atomic<Entry*>& segment = segments_[count >> kSegmentBits];
  if (!segment.load(std::memory_order_relaxed)) {
    Entry* fresh = new (std::nothrow) Entry[kSegmentSize]();
    if (!fresh) return 0;
    segment.store(fresh, std::memory_order_release);
    memory_bytes_.fetch_add(kSegmentSize * sizeof(Entry), std::memory_order_relaxed);
  }
  // Frames, methods and lines in one block (at least one byte: a stack may be empty).
  size_t depth = stack.depth;
  size_t bytes = depth * (sizeof(CallFrame) + sizeof(uint32_t) + sizeof(int32_t)) + 1;
  auto* frames = static_cast<CallFrame*>(malloc(bytes));
  if (!frames) return 0;
  memcpy(frames, stack.frames, depth * sizeof(CallFrame));
  auto* methods = reinterpret_cast<uint32_t*>(frames + depth);
  auto* lines = reinterpret_cast<int32_t*>(methods + depth);
  for (size_t i = 0; i < depth; i++) {
    methods[i] = 0;
    lines[i] = -1;
  }
  Entry& e = segment.load(std::memory_order_relaxed)[count & (kSegmentSize - 1)];
  e.hash = hash;
  e.frames = frames;
  e.depth = static_cast<uint16_t>(depth);
  e.truncated = stack.truncated;
  e.listed_in.store(0, std::memory_order_relaxed);
  e.methods = methods;
  e.lines = lines;
  memory_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  count_.store(count + 1, std::memory_order_release);
  size_t i = hash & slots->mask;
  while (slots->ids[i].load(std::memory_order_relaxed)) i = (i + 1) & slots->mask;
  slots->ids[i].store(id, std::memory_order_release);
  return id;
}

}  // namespace nmprof
