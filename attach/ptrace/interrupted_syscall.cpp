#include "attach/ptrace/interrupted_syscall.h"

#include <sys/syscall.h>

#include <cerrno>

namespace nmprof::attach {
namespace {

constexpr int64_t kRestartNoHand = -514;  // ERESTARTNOHAND, kernel-internal (include/linux/errno.h)

// Calls that have done nothing when they end with EINTR: running them again is
// what the program would have seen without nmprof (a timeout starts over).
bool restartable_on_eintr(int64_t number) {
  switch (number) {
    case SYS_read: case SYS_readv: case SYS_write: case SYS_writev:
    case SYS_recvfrom: case SYS_recvmsg: case SYS_recvmmsg: case SYS_accept: case SYS_accept4:
    case SYS_epoll_wait: case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
    case SYS_epoll_pwait2:
#endif
    case SYS_rt_sigtimedwait: case SYS_semop: case SYS_semtimedop:
    case SYS_wait4: case SYS_waitid: case SYS_futex:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool is_idle_syscall(int64_t number) {
  switch (number) {
    case SYS_poll: case SYS_ppoll: case SYS_select: case SYS_pselect6: case SYS_pause: case SYS_rt_sigsuspend:
    case SYS_nanosleep: case SYS_clock_nanosleep:
    case SYS_restart_syscall:  // one of these, interrupted before (by nmprof too) and waiting again
      return true;
    default:
      return restartable_on_eintr(number);
  }
}

int64_t restartable_result(int64_t number, int64_t result) {
  return result == -EINTR && restartable_on_eintr(number) ? kRestartNoHand : result;
}

}  // namespace nmprof::attach
