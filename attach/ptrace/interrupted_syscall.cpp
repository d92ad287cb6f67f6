#include "attach/ptrace/interrupted_syscall.h"

#include <linux/futex.h>
#include <sys/syscall.h>

#include <cerrno>

namespace nmprof::attach {
namespace {

constexpr int64_t kRestartNoHand = -514;  // ERESTARTNOHAND, kernel-internal (include/linux/errno.h)
constexpr int64_t kRestartBlock = -516;   // ERESTART_RESTARTBLOCK
constexpr uint64_t kSyscallLength = 2;    // the syscall instruction, 0f 05

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

bool may_resume_through_restart_syscall(int64_t number, const uint64_t (&args)[6]) {
  switch (number) {
    case SYS_nanosleep: case SYS_clock_nanosleep: case SYS_restart_syscall:
      return true;
    case SYS_poll:  // a negative timeout waits for ever, and restarts as itself
      return static_cast<int>(args[2]) >= 0;
    case SYS_futex: {
      int op = static_cast<int>(args[1]) & FUTEX_CMD_MASK;
      return (op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET) && args[3] != 0;
    }
    default:
      return false;
  }
}

bool resumes_through_restart_syscall(const user_regs_struct& regs) {
  auto number = static_cast<int64_t>(regs.orig_rax);
  // restart_syscall itself: the filter let it through before, or the thread would be dead.
  return number >= 0 && number != SYS_restart_syscall && static_cast<int64_t>(regs.rax) == kRestartBlock;
}

void restart_as_itself(user_regs_struct& regs) {
  // What the kernel does for -ERESTARTNOINTR: back to the syscall instruction, with
  // the call's number; its arguments are still in their registers.
  regs.rax = regs.orig_rax;
  regs.rip -= kSyscallLength;
}

}  // namespace nmprof::attach
