// Captures the native stack of a sampled allocation from inside the agent, and
// drops the agent's own frames, so the innermost frame is the caller of the hooked
// function (malloc's caller, or strdup inside libc).
#pragma once

#include "agent/stacks/call_stack.h"
#include "agent/stacks/modules.h"
#include "agent/threads/thread_state.h"
#include "agent/unwind/stack_walker.h"

namespace nmprof {

// Rows found for recent pcs, per thread: a sampled call site is mostly sampled again
// and again, and a cached row saves a binary search per frame.
struct RowCache {
  static constexpr size_t kEntries = 64;
  struct Entry {
    uintptr_t pc;
    const unwind::FrameRow* row;  // may be null: the module has no rule there
  };
  uint64_t generation;  // of the ModuleMap the rows belong to
  Entry entries[kEntries];
};

// Where a native walk ended: in code of no known module (in a JVM, Java code: the
// Java frames take over there) or anywhere else (end of stack, depth, bad frame).
struct NativeWalkEnd {
  bool in_unknown_code = false;
  unwind::Registers registers;  // of the first frame not walked
};

class StackCapture : public unwind::FrameTableLookup {
 public:
  explicit StackCapture(const ModuleMap& modules) : modules_(modules) {}
  // Walks from `caller`: the registers of the frame the sampled path returns to
  // (the caller of malloc, or a hook that did not tail-call). `pcs` is scratch for
  // the walk: out.capacity + kAgentFrames entries.
  NativeWalkEnd capture(ThreadState& t, const unwind::Registers& caller, CallStack& out, uintptr_t* pcs);
  const unwind::FrameTable* table_for(uintptr_t pc) const override;
  bool find_row(uintptr_t pc, const unwind::FrameRow** row) const override;

  // Frames of the agent itself the walk may meet before the hooked call's caller.
  static constexpr size_t kAgentFrames = 8;

 private:
  const ModuleMap& modules_;
};

}  // namespace nmprof
