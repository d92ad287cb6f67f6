#include "attach/ptrace/tracee_wait.h"

#include <sys/wait.h>

#include <algorithm>
#include <cerrno>

namespace nmprof::attach {
namespace {

constexpr int kTerminationSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
// SIGCHLD may go to another thread of nmprof, or be merged with another child's:
// the wait looks again at least this often.
constexpr auto kLongestNap = std::chrono::milliseconds(10);

}  // namespace

TraceSignals::TraceSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kTerminationSignals) sigaddset(&set, s);
  sigaddset(&set, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &set, &old_);
}

TraceSignals::~TraceSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

bool termination_requested() {
  sigset_t pending;
  if (sigpending(&pending) != 0) return false;
  return std::any_of(std::begin(kTerminationSignals), std::end(kTerminationSignals),
                     [&](int s) { return sigismember(&pending, s) == 1; });
}

WaitEnd wait_for_stop(pid_t tid, int* status, Clock::time_point deadline, bool interruptible) {
  sigset_t child;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  for (;;) {
    pid_t got = waitpid(tid, status, __WALL | WNOHANG);
    if (got == tid) return WIFSTOPPED(*status) ? WaitEnd::kStopped : WaitEnd::kExited;
    if (got < 0 && errno != EINTR) return WaitEnd::kExited;
    if (interruptible && termination_requested()) return WaitEnd::kInterrupted;
    auto now = Clock::now();
    if (now >= deadline) return WaitEnd::kTimedOut;
    auto nap = std::min<Clock::duration>(deadline - now, kLongestNap);
    timespec wait{0, std::chrono::duration_cast<std::chrono::nanoseconds>(nap).count()};
    sigtimedwait(&child, nullptr, &wait);
  }
}

}  // namespace nmprof::attach
