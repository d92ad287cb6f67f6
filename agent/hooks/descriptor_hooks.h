// Entry points for the calls that close or replace a program's descriptors (close,
// close_range, closefrom, dup2, dup3): the agent's own descriptors among them are
// moved away or left out first (safety/own_descriptors.h), so that the program's
// call does to its numbers what it would do without nmprof, and never reaches the
// agent's files. Two atomic additions and a compare when the number is not the
// agent's.
#pragma once

#include <linux/close_range.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "agent/hooks/hook_table.h"
#include "agent/safety/own_descriptors.h"

namespace nmprof {

template <int K>
struct CloseHook {
  static int call(int fd) {
    // Refused only in a signal handler that interrupted the agent's own use of the
    // number: as without nmprof, the number is not the program's.
    if (!own_descriptors::begin_replacing(fd)) return errno = EBADF, -1;
    int result = hook_target<int (*)(int)>(kClose, K)(fd);
    own_descriptors::end_replacing(fd);
    return result;
  }
};

// dup2, dup3: (old, fd, ...) replace fd.
template <int K>
struct Dup2Hook {
  static int call(int old, int fd) {
    if (!own_descriptors::begin_replacing(fd)) return errno = EBUSY, -1;
    int result = hook_target<int (*)(int, int)>(kDup2, K)(old, fd);
    own_descriptors::end_replacing(fd);
    return result;
  }
};

template <int K>
struct Dup3Hook {
  static int call(int old, int fd, int flags) {
    if (!own_descriptors::begin_replacing(fd)) return errno = EBUSY, -1;
    int result = hook_target<int (*)(int, int, int)>(kDup3, K)(old, fd, flags);
    own_descriptors::end_replacing(fd);
    return result;
  }
};

// Calls `close_part(first, last)` for each part of [first, last] that holds none of
// the agent's descriptors; the first failure's result and errno.
template <typename ClosePart>
int close_around_agent(unsigned first, unsigned last, ClosePart close_part) {
  own_descriptors::RangePlan plan;
  own_descriptors::begin_range(first, last, &plan);
  int result = 0, error = 0;
  for (size_t i = 0; i < plan.count; i++) {
    if (close_part(plan.parts[i].first, plan.parts[i].last) == 0 || result != 0) continue;
    result = -1;
    error = errno;
  }
  own_descriptors::end_range(plan);
  if (result != 0) errno = error;
  return result;
}

template <int K>
struct CloseRangeHook {
  static int call(unsigned first, unsigned last, int flags) {
    auto close_range_fn = hook_target<int (*)(unsigned, unsigned, int)>(kCloseRange, K);
    // CLOSE_RANGE_CLOEXEC closes nothing (the agent's descriptors are close-on-exec
    // already); bad arguments get the call's own error.
    if (first > last || (flags & ~CLOSE_RANGE_UNSHARE) != 0) return close_range_fn(first, last, flags);
    return close_around_agent(first, last, [&](unsigned a, unsigned b) { return close_range_fn(a, b, flags); });
  }
};

// glibc's closefrom(first) is close_range(first, ~0U, 0), or a walk of /proc/self/fd
// on kernels without close_range: the part at the top goes to closefrom itself.
template <int K>
struct ClosefromHook {
  static void call(int first) {
    auto closefrom_fn = hook_target<void (*)(int)>(kClosefrom, K);
    if (first < 0) return closefrom_fn(first);
    int saved = errno;
    close_around_agent(static_cast<unsigned>(first), ~0U, [&](unsigned a, unsigned b) {
      if (b == ~0U) return closefrom_fn(static_cast<int>(a)), 0;
      if (syscall(SYS_close_range, a, b, 0) == 0) return 0;
      for (unsigned fd = a; fd <= b; fd++) syscall(SYS_close, fd);
      return 0;
    });
    errno = saved;
  }
};

}  // namespace nmprof
