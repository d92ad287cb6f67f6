// What a task that shares a program's memory and thread pointer (a clone made with
// CLONE_VM, the exit watch) needs of its architecture: system calls that touch no
// thread-local storage (libc's wrappers set errno in the TLS of the thread whose
// pointer it shares, which may be running), and reading and setting the thread
// pointer. One block per architecture; nothing else of the agent's is specific to one.
#pragma once

#include <cstdint>

namespace nmprof::bare_task {

// A system call: its raw result (-errno on failure), errno untouched.
inline long call(long number, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0);
inline uintptr_t thread_pointer();
// Takes the TLS of another thread (all the program's threads being gone).
inline void set_thread_pointer(uintptr_t pointer);

#if defined(__x86_64__)

inline long call(long number, long a, long b, long c, long d, long e) {
  long result;
  register long r10 asm("r10") = d;
  register long r8 asm("r8") = e;
  asm volatile("syscall"
               : "=a"(result)
               : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
               : "rcx", "r11", "memory");
  return result;
}

inline uintptr_t thread_pointer() {
  uintptr_t pointer;
  asm("mov %%fs:0, %0" : "=r"(pointer));
  return pointer;
}

inline void set_thread_pointer(uintptr_t pointer) {
  constexpr long kArchPrctl = 158, kArchSetFs = 0x1002;  // asm/prctl.h
  call(kArchPrctl, kArchSetFs, static_cast<long>(pointer));
}

#elif defined(__aarch64__)

inline long call(long number, long a, long b, long c, long d, long e) {
  register long x8 asm("x8") = number;
  register long x0 asm("x0") = a;
  register long x1 asm("x1") = b;
  register long x2 asm("x2") = c;
  register long x3 asm("x3") = d;
  register long x4 asm("x4") = e;
  asm volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
  return x0;
}

inline uintptr_t thread_pointer() {
  uintptr_t pointer;
  asm volatile("mrs %0, tpidr_el0" : "=r"(pointer));
  return pointer;
}

inline void set_thread_pointer(uintptr_t pointer) { asm volatile("msr tpidr_el0, %0" : : "r"(pointer) : "memory"); }

#else
#error "bare_task.h: no system calls for this architecture"
#endif

}  // namespace nmprof::bare_task
