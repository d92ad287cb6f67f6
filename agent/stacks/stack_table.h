// Deduplicates call stacks: each distinct stack gets a small id once and keeps it,
// with its raw frames and what they resolved to (method and line, filled in by the
// writer). Finding a known stack takes no lock, so sampling threads do not wait for
// each other: entries never move once published, slots are published with release
// stores after their entry, and a table that grows is replaced whole (the old one
// stays: a reader may be probing it, and misses only what it then finds under the
// lock). Adding a stack takes the table's own lock, once per distinct stack.
#pragma once

#include <atomic>
#include <cstdint>

#include "agent/safety/spin_lock.h"
#include "agent/stacks/call_stack.h"

namespace nmprof {

class StackTable {
 public:
  struct Entry {
    uint64_t hash;
    const CallFrame* frames;
    uint16_t depth;
    bool truncated;
    // The output generation whose writer was told about this stack: the sampling
    // thread that first uses it in a generation lists it for the pools.
    std::atomic<uint32_t> listed_in;
    // The writer's alone: per frame, the JfrPools method it resolved to (0 = not yet)
    // and its line (-1 = none).
    uint32_t* methods;
    int32_t* lines;
  };

  StackTable() = default;
  ~StackTable();
  StackTable(const StackTable&) = delete;
  StackTable& operator=(const StackTable&) = delete;

  // The id (1-based) of the stack, added when new; 0 when it cannot be added now
  // (out of memory or ids, or `self` interrupted an addition: a signal handler).
  uint32_t intern(const CallStack& stack, int self);
  Entry& entry(uint32_t id) const {
    return segments_[(id - 1) >> kSegmentBits].load(std::memory_order_acquire)[(id - 1) & (kSegmentSize - 1)];
  }
  size_t size() const { return count_.load(std::memory_order_acquire); }
  size_t memory_bytes() const { return memory_bytes_.load(std::memory_order_relaxed); }

  // fork(): held across it, so that the child finds no addition half done.
  void before_fork(int self) { lock_.lock(self); }
  void after_fork() { lock_.unlock(); }
  // Whether `self` is adding a stack (a signal handler interrupted it).
  bool owned_by(int self) const { return lock_.owner() == self; }
  bool locked() const { return lock_.owner() != 0; }  // by any thread

 private:
  static constexpr unsigned kSegmentBits = 12;
  static constexpr size_t kSegmentSize = size_t{1} << kSegmentBits;
  static constexpr size_t kMaxSegments = 4096;  // 16M distinct stacks

  struct Slots {
    size_t mask;
    Slots* replaced;  // the smaller table this one replaced (kept, never read again by new lookups)
    std::atomic<uint32_t> ids[1];  // mask + 1 of them: stack id or 0
  };

  static uint64_t hash_of(const CallStack& stack);
  static bool same(const Entry& e, const CallStack& stack, uint64_t hash);
  uint32_t find(const Slots* slots, const CallStack& stack, uint64_t hash) const;
  uint32_t add(const CallStack& stack, uint64_t hash);
  Slots* grow(Slots* old);

  SpinLock lock_;  // additions
  std::atomic<Slots*> slots_{nullptr};
  std::atomic<size_t> count_{0};
  std::atomic<size_t> memory_bytes_{0};
  std::atomic<Entry*> segments_[kMaxSegments] = {};
};

}  // namespace nmprof
