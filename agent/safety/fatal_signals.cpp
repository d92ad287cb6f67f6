#include "agent/safety/fatal_signals.h"

#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace nmprof {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
constexpr time_t kWatchdogSeconds = 3;

bool (*g_flush)() = nullptr;
struct sigaction g_previous[NSIG];
bool g_installed[NSIG];

void on_fatal_signal(int signo, siginfo_t* info, void* context);

bool ours_installed(int signo) {
  struct sigaction current;
  return sigaction(signo, nullptr, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
         current.sa_sigaction == on_fatal_signal;
}

bool is_handler(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) ? action.sa_sigaction != nullptr
                                        : action.sa_handler != SIG_DFL && action.sa_handler != SIG_IGN;
}

// Runs the handler that was there before ours the way the kernel would have: with
// its mask added, and reset first if it asked for SA_RESETHAND.
void call_previous(int signo, siginfo_t* info, void* context) {
  const struct sigaction& previous = g_previous[signo];
  if (previous.sa_flags & SA_RESETHAND) signal(signo, SIG_DFL);
  sigset_t mask = previous.sa_mask;
  if (!(previous.sa_flags & SA_NODEFER)) sigaddset(&mask, signo);
  sigset_t saved;
  pthread_sigmask(SIG_BLOCK, &mask, &saved);
  if (previous.sa_flags & SA_SIGINFO)
    previous.sa_sigaction(signo, info, context);
  else
    previous.sa_handler(signo);
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
}

// If writing hangs (the crash left the allocator's lock held on this thread), the
// same signal, now at its default action, ends the process a few seconds later.
// Raw system calls: glibc's timer functions are not async-signal-safe.
int arm_watchdog(int signo) {
  struct sigevent event = {};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = signo;
  event._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
  int timer = -1;
  if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &event, &timer) != 0) return -1;
  struct itimerspec after = {{0, 0}, {kWatchdogSeconds, 0}};
  syscall(SYS_timer_settime, timer, 0, &after, nullptr);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signo);
  pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
  return timer;
}

void disarm_watchdog(int signo, int timer) {
  if (timer < 0) return;
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signo);
  pthread_sigmask(SIG_BLOCK, &only, nullptr);
  syscall(SYS_timer_delete, timer);
}

void on_fatal_signal(int signo, siginfo_t* info, void* context) {
  if (is_handler(g_previous[signo])) {
    call_previous(signo, info, context);
    // Still ours: it handled the signal (or will see it again when the fault recurs).
    if (ours_installed(signo)) return;
  } else {
    sigaction(signo, &g_previous[signo], nullptr);
  }
  // From here the disposition is the one the process dies by.
  int watchdog = arm_watchdog(signo);
  g_flush();
  disarm_watchdog(signo, watchdog);
  // A fault returns to the instruction, which faults again; a sent signal (raise,
  // abort, kill) is sent again, and delivered when this handler returns.
  if (info->si_code <= 0) raise(signo);
}

}  // namespace

void install_fatal_handlers(bool (*flush)()) {
  g_flush = flush;
  for (int signo : kSignals) {
    struct sigaction current;
    if (g_installed[signo] || sigaction(signo, nullptr, &current) != 0) continue;
    if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN) continue;
    g_previous[signo] = current;
    struct sigaction ours = {};
    ours.sa_sigaction = on_fatal_signal;
    sigemptyset(&ours.sa_mask);
    // On the thread's alternate stack if it has one: a stack overflow is handled there.
    ours.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    g_installed[signo] = sigaction(signo, &ours, nullptr) == 0;
  }
}

void remove_fatal_handlers() {
  for (int signo : kSignals) {
    if (!g_installed[signo]) continue;
    if (ours_installed(signo)) sigaction(signo, &g_previous[signo], nullptr);
    g_installed[signo] = false;
  }
}

}  // namespace nmprof
