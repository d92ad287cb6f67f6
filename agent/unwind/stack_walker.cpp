#include "agent/unwind/stack_walker.h"

namespace nmprof::unwind {
namespace {

enum class Step { kCaller, kEndOfStack, kBadFrame };

// This process's own stack, read in place.
struct LocalStack {
  bool read_word(uintptr_t address, uintptr_t& value) const {
    value = *reinterpret_cast<const uintptr_t*>(address);
    return true;
  }
};

// The part of the stack above the current frame's sp: every read the walk makes.
template <class Memory>
class StackWindow {
 public:
  StackWindow(uintptr_t low, uintptr_t high, const Memory& memory) : low_(low), high_(high), memory_(memory) {}

  bool read(uintptr_t address, uintptr_t& value) const {
    if (address % sizeof(uintptr_t) != 0 || address < low_ || address >= high_ ||
        high_ - address < sizeof(uintptr_t)) {
      return false;
    }
    return memory_.read_word(address, value);
  }

 private:
  uintptr_t low_;
  uintptr_t high_;
  const Memory& memory_;
};

template <class Memory>
Step caller_by_rule(const FrameRow& row, const Registers& frame, const StackWindow<Memory>& stack,
                    Registers& caller) {
  uintptr_t base = row.base() == CfaBase::kRsp ? frame.sp : frame.fp;
  uintptr_t cfa = base + row.cfa_offset;
  if (cfa < base) return Step::kBadFrame;
  if (!stack.read(cfa - 8, caller.pc)) return Step::kBadFrame;
  if (row.rbp_slot == FrameRow::kRbpUnchanged) {
    caller.fp = frame.fp;
  } else if (row.rbp_slot == FrameRow::kRbpUnknown) {
    caller.fp = 0;
  } else if (!stack.read(cfa + static_cast<intptr_t>(row.rbp_slot) * 8, caller.fp)) {
    return Step::kBadFrame;
  }
  caller.sp = cfa;
  return Step::kCaller;
}

// Code without unwind rows is assumed to keep rbp as a frame pointer:
// [rbp] is the caller's rbp, [rbp + 8] the return address.
template <class Memory>
Step caller_by_frame_pointer(const Registers& frame, const StackWindow<Memory>& stack, Registers& caller) {
  if (frame.fp == 0) return Step::kEndOfStack;  // the outermost frame clears rbp
  if (!stack.read(frame.fp, caller.fp) || !stack.read(frame.fp + 8, caller.pc)) return Step::kBadFrame;
  caller.sp = frame.fp + 16;
  return Step::kCaller;
}

// One walker for both: this process's stack read in place (no indirect call per word
// on the agent's sampled path), or another process's through StackMemory.
template <class Memory>
StackWalk walk_frames(const Registers& start, uintptr_t stack_end, const FrameTableLookup& tables,
                      const Memory& memory, std::span<uintptr_t> frames, FirstPc first_pc) {
  StackWalk walk;
  Registers frame = start;
  bool exact_pc = first_pc == FirstPc::kExact;
  for (;;) {
    // A return address may be the first byte of the next function (after a noreturn call).
    uintptr_t lookup_pc = exact_pc ? frame.pc : frame.pc - 1;
    const FrameRow* row = nullptr;
    walk.stopped_at = frame;
    if (!tables.find_row(lookup_pc, &row)) {
      walk.stop = WalkStop::kUnknownCode;
      return walk;
    }
    if (walk.depth == frames.size()) {
      walk.stop = WalkStop::kDepthLimit;
      return walk;
    }
    frames[walk.depth++] = frame.pc;

    if (row != nullptr && row->base() == CfaBase::kOutermost) {
      walk.stop = WalkStop::kEndOfStack;
      return walk;
    }
    StackWindow<Memory> stack(frame.sp, stack_end, memory);
    Registers caller;
    Step step = row != nullptr ? caller_by_rule(*row, frame, stack, caller)
                               : caller_by_frame_pointer(frame, stack, caller);
    if (step == Step::kCaller && caller.pc == 0) step = Step::kEndOfStack;
    if (step == Step::kCaller && caller.sp <= frame.sp) step = Step::kBadFrame;  // must move outward
    if (step != Step::kCaller) {
      walk.stop = step == Step::kEndOfStack ? WalkStop::kEndOfStack : WalkStop::kBadFrame;
      return walk;
    }
    frame = caller;
    exact_pc = false;
  }
}

}  // namespace

StackWalk walk_stack(const Registers& start, uintptr_t stack_end, const FrameTableLookup& tables,
                     std::span<uintptr_t> frames, FirstPc first_pc) {
  return walk_frames(start, stack_end, tables, LocalStack{}, frames, first_pc);
}

StackWalk walk_stack(const Registers& start, uintptr_t stack_end, const FrameTableLookup& tables,
                     const StackMemory& memory, std::span<uintptr_t> frames, FirstPc first_pc) {
  return walk_frames(start, stack_end, tables, memory, frames, first_pc);
}

}  // namespace nmprof::unwind
