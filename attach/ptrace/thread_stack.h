// The stack of a thread nmprof stopped, walked with the agent's unwinder over the
// target's memory (/proc/<pid>/mem) and its modules' unwind rules, each frame
// described for the safe-point check (safe_point.h).
#pragma once

#include <sys/user.h>

#include <vector>

#include "attach/ptrace/safe_point.h"
#include "attach/ptrace/target_modules.h"

namespace nmprof::attach {

struct ThreadStack {
  std::vector<StackFrame> frames;  // innermost first
  bool reached_entry = false;       // the last frame's rules mark it outermost
};

// `memory`: the target's /proc/<pid>/mem, open for reading.
ThreadStack walk_thread_stack(int memory, const user_regs_struct& registers, const TargetModules& modules);

}  // namespace nmprof::attach
