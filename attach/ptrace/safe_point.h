// Whether a stopped thread may run nmprof's call (the target's dlopen, the agent's
// entry point), judged from its whole stack. Code that may hold a lock the call
// needs must not be anywhere on it: the C library (but for a call the program made
// itself, at the top, that holds no lock: an idle wait, the clock), the dynamic
// loader, nmprof's agent, any allocator (a module that defines malloc or free, or
// malloc's family by name), or code nmprof cannot read (JIT code, a signal frame).
// The walk must reach the frame the thread started in, whose unwind rules mark it
// outermost (clone3, _start), through at most the C library's entry functions above
// it (start_thread, __libc_start_main). The kernel's vDSO counts as the C library.
//
//   thread in nanosleep from main:      nanosleep | main | __libc_start_call_main ... _start   safe
//   thread waiting on jemalloc's lock:  futex | ... | libjemalloc | worker | start_thread | clone3   not safe
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nmprof::attach {

enum class CodeKind : uint8_t {
  kProgram,    // the program's code and its ordinary libraries
  kLibc,       // the C library
  kLoader,     // the dynamic loader
  kAgent,      // nmprof's agent
  kAllocator,  // an allocator
  kUnknown,    // no module nmprof can read holds it
};

struct StackFrame {
  uint64_t pc = 0;
  CodeKind kind = CodeKind::kUnknown;
  std::vector<std::string> functions;  // the names of the function there, when known
  std::string module;                   // its file name, for messages
};

struct StackVerdict {
  bool safe = false;
  std::string why;  // when not safe: "in libjemalloc.so.2 (an allocator)"
};

// `frames`: innermost first. `reached_entry`: the walk ended at a frame whose unwind
// rules mark it as the outermost.
StackVerdict judge_stack(std::span<const StackFrame> frames, bool reached_entry);

}  // namespace nmprof::attach
