// Walks a thread's native stack from a set of registers, using each module's
// FrameTable and falling back to the frame-pointer chain where a module has no rule.
// Reads only aligned words inside the part of the stack not yet unwound, so bad
// tables or a corrupt stack end the walk instead of faulting. Allocates nothing and
// takes no lock: safe in a malloc hook or a signal handler (if `tables` is).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "agent/unwind/frame_table.h"
#include "agent/unwind/registers.h"

namespace nmprof::unwind {

// The agent's registry of loaded modules, as the walker sees it.
class FrameTableLookup {
 public:
  // The table of the module holding `pc`, or nullptr when no known module does (the
  // walk stops there). A module without unwind data answers with an empty table.
  virtual const FrameTable* table_for(uintptr_t pc) const = 0;
  // The rule for `pc`: false when no known module holds it (the walk stops there);
  // otherwise *row is the rule, or nullptr where the module has none (frame pointers).
  // Lookups that cache rows override this.
  virtual bool find_row(uintptr_t pc, const FrameRow** row) const {
    const FrameTable* table = table_for(pc);
    if (!table) return false;
    *row = table->find(pc);
    return true;
  }

 protected:
  ~FrameTableLookup() = default;
};

// The stack of another process (nmprof attach walks a stopped thread of its target).
class StackMemory {
 public:
  // The word at `address` (aligned, inside the stack); false when it cannot be read.
  virtual bool read_word(uintptr_t address, uintptr_t& value) const = 0;

 protected:
  ~StackMemory() = default;
};

enum class WalkStop {
  kEndOfStack,   // the outermost frame was reached
  kUnknownCode,  // a pc outside every known module (JIT code, say): `stopped_at` is that frame
  kDepthLimit,   // `frames` is full and the next frame is in a known module
  kBadFrame,     // the caller of the last frame could not be found, or looked invalid
};

struct StackWalk {
  size_t depth = 0;  // frames written
  WalkStop stop = WalkStop::kBadFrame;
  // kUnknownCode and kDepthLimit: the first frame not written, for another walker to
  // continue from. Otherwise the last frame written.
  Registers stopped_at;

  bool truncated() const { return stop == WalkStop::kDepthLimit; }
};

enum class FirstPc {
  kExact,          // from current_registers() or a signal context
  kReturnAddress,  // points after a call, like every frame but the first
};

// Writes pcs into `frames`, innermost first, starting with `start.pc`. The stack is
// [start.sp, stack_end).
StackWalk walk_stack(const Registers& start, uintptr_t stack_end, const FrameTableLookup& tables,
                     std::span<uintptr_t> frames, FirstPc first_pc = FirstPc::kExact);

// The same walk over a stack read through `memory` instead of in place.
StackWalk walk_stack(const Registers& start, uintptr_t stack_end, const FrameTableLookup& tables,
                     const StackMemory& memory, std::span<uintptr_t> frames, FirstPc first_pc = FirstPc::kExact);

}  // namespace nmprof::unwind
