// Deduplicates call stacks: each distinct stack gets a small id once and is kept,
// raw frames with what they resolved to (method and line, filled in by the recorder),
// so the JFR pools can describe it. Callers hold the recorder lock.
#pragma once

#include <cstdint>
#include <vector>

#include "agent/stacks/call_stack.h"

namespace nmprof {

class StackTable {
 public:
  struct Entry {
    uint64_t hash;
    uint32_t first_frame;  // index into frames()
    uint16_t depth;
    bool truncated;
    uint32_t written_in;   // output generation whose pools already hold this stack
  };

  // Returns the id (1-based) of the stack, adding it when new; `added` tells which.
  uint32_t intern(const CallStack& stack, bool& added);
  const Entry& entry(uint32_t id) const { return entries_[id - 1]; }
  Entry& entry(uint32_t id) { return entries_[id - 1]; }
  const CallFrame* frames(const Entry& e) const { return &frames_[e.first_frame]; }
  // Per frame: the JfrPools method it resolved to (0 = not yet) and its line (-1 = none).
  uint32_t* methods(const Entry& e) { return &methods_[e.first_frame]; }
  int32_t* lines(const Entry& e) { return &lines_[e.first_frame]; }
  size_t size() const { return entries_.size(); }
  size_t memory_bytes() const;

 private:
  static uint64_t hash_of(const CallStack& stack);
  bool same(const Entry& e, const CallStack& stack) const;
  void grow();

  std::vector<Entry> entries_;
  std::vector<CallFrame> frames_;
  std::vector<uint32_t> methods_;
  std::vector<int32_t> lines_;
  std::vector<uint32_t> slots_;  // open addressing: stack id or 0
};

}  // namespace nmprof
