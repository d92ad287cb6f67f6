#include "agent/stacks/stack_table.h"

namespace nmprof {

uint64_t StackTable::hash_of(const CallStack& stack) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ stack.depth;
  for (size_t i = 0; i < stack.depth; i++) {
    const CallFrame& f = stack.frames[i];
    h = (h ^ (f.id + (static_cast<uint64_t>(static_cast<uint32_t>(f.bci)) << 8) + f.type + (f.java ? 0x80 : 0) +
              (static_cast<uint64_t>(f.load) << 40))) *
        0xff51afd7ed558ccdull;
    h ^= h >> 29;
  }
  return h | 1;  // never 0, so a hash alone cannot look like an empty slot
}

bool StackTable::same(const Entry& e, const CallStack& stack) const {
  if (e.depth != stack.depth || e.truncated != stack.truncated) return false;
  const CallFrame* f = &frames_[e.first_frame];
  for (size_t i = 0; i < stack.depth; i++)
    if (!(f[i] == stack.frames[i])) return false;
  return true;
}

uint32_t StackTable::intern(const CallStack& stack, bool& added) {
  added = false;
  if (entries_.size() * 2 >= slots_.size()) grow();
  uint64_t h = hash_of(stack);
  size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    uint32_t id = slots_[i];
    if (id == 0) {
      entries_.push_back({h, static_cast<uint32_t>(frames_.size()), static_cast<uint16_t>(stack.depth),
                          stack.truncated, 0});
      frames_.insert(frames_.end(), stack.frames, stack.frames + stack.depth);
      methods_.resize(frames_.size(), 0);
      lines_.resize(frames_.size(), -1);
      slots_[i] = static_cast<uint32_t>(entries_.size());
      added = true;
      return slots_[i];
    }
    const Entry& e = entries_[id - 1];
    if (e.hash == h && same(e, stack)) return id;
  }
}

void StackTable::grow() {
  std::vector<uint32_t> slots(slots_.empty() ? 1024 : slots_.size() * 2, 0);
  size_t mask = slots.size() - 1;
  for (uint32_t id = 1; id <= entries_.size(); id++) {
    size_t i = entries_[id - 1].hash & mask;
    while (slots[i]) i = (i + 1) & mask;
    slots[i] = id;
  }
  slots_.swap(slots);
}

size_t StackTable::memory_bytes() const {
  return entries_.capacity() * sizeof(Entry) + frames_.capacity() * sizeof(CallFrame) +
         methods_.capacity() * sizeof(uint32_t) + lines_.capacity() * sizeof(int32_t) +
         slots_.capacity() * sizeof(uint32_t);
}

}  // namespace nmprof
