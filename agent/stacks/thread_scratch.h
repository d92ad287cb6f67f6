// Per-thread memory of the sampled path, allocated on a thread's first sample and
// freed when it exits: the row cache, the stack being captured, the pcs of the
// walk, and room for a runtime's own frames (AsyncGetCallTrace's, for Java). One
// allocation, sized by stackdepth.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agent/stacks/call_stack.h"
#include "agent/stacks/stack_capture.h"

namespace nmprof {

class ThreadScratch {
 public:
  // Bytes per frame of stackdepth that runtime_frames() holds: enough for a frame
  // of AsyncGetCallTrace (a bytecode index and a method id) and a frame type byte.
  static constexpr size_t kRuntimeBytesPerFrame = 2 * sizeof(void*) + 1;

  // The calling thread's scratch (made on first use), or null if out of memory.
  static ThreadScratch* of_this_thread(size_t depth);
  // Registers the destructor that frees a thread's scratch when it exits.
  static bool init();

  RowCache& rows() { return rows_; }
  CallFrame* frames() { return reinterpret_cast<CallFrame*>(this + 1); }
  uintptr_t* walk_pcs() { return reinterpret_cast<uintptr_t*>(frames() + depth_); }
  // depth() * kRuntimeBytesPerFrame bytes, aligned as a pointer, for a runtime to lay
  // out its frames in (JavaStacks::append).
  std::byte* runtime_frames() { return reinterpret_cast<std::byte*>(walk_pcs() + depth_ + StackCapture::kAgentFrames); }
  size_t depth() const { return depth_; }

 private:
  static size_t bytes_for(size_t depth) {
    return sizeof(ThreadScratch) + depth * sizeof(CallFrame) +
           (depth + StackCapture::kAgentFrames) * sizeof(uintptr_t) + depth * kRuntimeBytesPerFrame;
  }

  RowCache rows_;
  size_t depth_;
};

}  // namespace nmprof
