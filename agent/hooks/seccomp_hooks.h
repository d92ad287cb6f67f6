// Entry points for the calls that put a process under a seccomp filter: prctl
// (PR_SET_SECCOMP) and, for seccomp(2), which glibc has no wrapper for, syscall().
// Once a filter is in, any system call the program did not plan for may kill it
// (SIGSYS), and the agent's writer makes several: the agent ends its recording first
// and makes no system call afterwards (on_seccomp_filter_coming).
#pragma once

#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "agent/hooks/hook_events.h"
#include "agent/hooks/hook_table.h"

namespace nmprof {

// Whether a prctl() would install a filter or strict mode.
inline bool sets_seccomp(long option) { return option == PR_SET_SECCOMP; }

// Whether a system call would: seccomp(SECCOMP_SET_MODE_*), or prctl(PR_SET_SECCOMP).
inline bool sets_seccomp(long number, long first_argument) {
  return (number == SYS_seccomp &&
          (first_argument == SECCOMP_SET_MODE_STRICT || first_argument == SECCOMP_SET_MODE_FILTER)) ||
         (number == SYS_prctl && sets_seccomp(first_argument));
}

// prctl and syscall are variadic: their callers pass every argument in registers, as
// to a function of that many integers, and the extra ones read here are never used.
template <int K>
struct PrctlHook {
  static int call(int option, unsigned long a, unsigned long b, unsigned long c, unsigned long d) {
    if (sets_seccomp(option)) on_seccomp_filter_coming();
    return hook_target<int (*)(int, ...)>(kPrctl, K)(option, a, b, c, d);
  }
};

template <int K>
struct SyscallHook {
  static long call(long number, long a, long b, long c, long d, long e, long f) {
    if (sets_seccomp(number, a)) on_seccomp_filter_coming();
    return hook_target<long (*)(long, ...)>(kSyscall, K)(number, a, b, c, d, e, f);
  }
};

}  // namespace nmprof
