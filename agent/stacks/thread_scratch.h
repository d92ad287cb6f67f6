// Per-thread memory of the sampled path, allocated on a thread's first sample and
// freed when it exits: the row cache, the stack being captured, the pcs of the
// walk, and AsyncGetCallTrace's frames. One allocation, sized by stackdepth.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agent/stacks/call_stack.h"
#include "agent/java/hotspot/asgct.h"
#include "agent/stacks/stack_capture.h"

namespace nmprof {

class ThreadScratch {
 public:
  // The calling thread's scratch (made on first use), or null if out of memory.
  static ThreadScratch* of_this_thread(size_t depth);
  // Registers the destructor that frees a thread's scratch when it exits.
  static bool init();

  RowCache& rows() { return rows_; }
  CallFrame* frames() { return reinterpret_cast<CallFrame*>(this + 1); }
  uintptr_t* walk_pcs() { return reinterpret_cast<uintptr_t*>(frames() + depth_); }
  hotspot::ASGCT_CallFrame* java_frames() {
    return reinterpret_cast<hotspot::ASGCT_CallFrame*>(walk_pcs() + depth_ + StackCapture::kAgentFrames);
  }
  uint8_t* java_types() { return reinterpret_cast<uint8_t*>(java_frames() + depth_); }
  size_t depth() const { return depth_; }

 private:
  static size_t bytes_for(size_t depth) {
    return sizeof(ThreadScratch) + depth * sizeof(CallFrame) + (depth + StackCapture::kAgentFrames) * sizeof(uintptr_t) +
           depth * sizeof(hotspot::ASGCT_CallFrame) + depth;
  }

  RowCache rows_;
  size_t depth_;
};

}  // namespace nmprof
