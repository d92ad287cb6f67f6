// The registers a stack walk starts from, and a way to take them at the call site.
#pragma once

#include <cstdint>

namespace nmprof::unwind {

struct Registers {
  uintptr_t pc = 0;
  uintptr_t sp = 0;
  uintptr_t fp = 0;  // rbp
};

// The registers of the calling function at this point: pc is the address of an
// instruction inside it (an exact pc, not a return address). Inlined so that the
// walk starts in the caller's frame; the caller then drops its own frames.
[[gnu::always_inline]] inline Registers current_registers() {
  Registers registers;
  asm volatile(
      "leaq 0(%%rip), %0\n\t"
      "movq %%rsp, %1\n\t"
      "movq %%rbp, %2"
      : "=r"(registers.pc), "=r"(registers.sp), "=r"(registers.fp));
  return registers;
}

}  // namespace nmprof::unwind
