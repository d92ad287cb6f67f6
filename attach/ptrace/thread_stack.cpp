#include "attach/ptrace/thread_stack.h"

#include <unistd.h>

#include <array>
#include <cstring>

namespace nmprof::attach {
namespace {

// Deeper stacks are not followed to their start (not safe, then).
constexpr size_t kMaxFrames = 1024;
constexpr uintptr_t kBlock = 4096;

// The target's stack, read a block at a time: a walk reads a few words per frame.
class TargetStack final : public unwind::StackMemory {
 public:
  explicit TargetStack(int memory) : memory_(memory) {}

  bool read_word(uintptr_t address, uintptr_t& value) const override {
    uintptr_t block = address & ~(kBlock - 1);
    if (block != cached_) {
      if (pread(memory_, bytes_.data(), kBlock, static_cast<off_t>(block)) != static_cast<ssize_t>(kBlock))
        return false;
      cached_ = block;
    }
    std::memcpy(&value, bytes_.data() + (address - block), sizeof value);
    return true;
  }

 private:
  int memory_;
  mutable uintptr_t cached_ = ~uintptr_t{0};  // no block yet
  mutable std::array<uint8_t, kBlock> bytes_;
};

}  // namespace

ThreadStack walk_thread_stack(int memory, const user_regs_struct& registers, const TargetModules& modules) {
  ThreadStack stack;
  uint64_t stack_end = modules.mapping_end(registers.rsp);
  if (stack_end == 0) return stack;
  std::vector<uintptr_t> pcs(kMaxFrames);
  TargetStack target_stack(memory);
  unwind::Registers start{registers.rip, registers.rsp, registers.rbp};
  unwind::StackWalk walk = unwind::walk_stack(start, stack_end, modules, target_stack, pcs);
  for (size_t i = 0; i < walk.depth; i++) stack.frames.push_back(modules.describe(pcs[i], i == 0));
  if (walk.stop == unwind::WalkStop::kEndOfStack && walk.depth > 0) {
    const unwind::FrameRow* row = nullptr;
    uint64_t last = walk.depth == 1 ? pcs[0] : pcs[walk.depth - 1] - 1;
    stack.reached_entry = modules.find_row(last, &row) && row && row->base() == unwind::CfaBase::kOutermost;
  }
  return stack;
}

}  // namespace nmprof::attach
