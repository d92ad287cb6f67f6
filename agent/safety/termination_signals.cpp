#include "agent/safety/termination_signals.h"

#include <signal.h>

#include <atomic>

namespace nmprof {
namespace {

// Those that end a process without core or with one, other than a crash's
// (fatal_signals.h): what users send (run forwards them all) and a broken pipe.
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE};

bool (*g_flush)() = nullptr;
std::atomic<int> g_deferred_signal{0};
struct sigaction g_ours[NSIG];  // sa_handler is on_signal where the agent took the signal
// Where it did: the default action the host last set (or the agent found), flags and
// mask included, which is what the host is told is there.
struct sigaction g_shown[NSIG];
// Set by glibc on every action it installs; not in its headers.
constexpr int kRestorerFlag = 0x04000000;

void die_by(int signo) {
  signal(signo, SIG_DFL);
  raise(signo);  // blocked while its handler runs: delivered, with the default action, on return
}

void on_signal(int signo) {
  if (!g_flush()) {
    g_deferred_signal.store(signo, std::memory_order_relaxed);
    return;
  }
  die_by(signo);
}

}  // namespace

void install_termination_handlers(bool (*flush)()) {
  g_flush = flush;
  for (int signo : kSignals) {
    struct sigaction current;
    if (sigaction(signo, nullptr, &current) != 0 || current.sa_handler != SIG_DFL ||
        (current.sa_flags & SA_SIGINFO))
      continue;
    struct sigaction ours = {};
    ours.sa_handler = on_signal;
    sigemptyset(&ours.sa_mask);
    ours.sa_flags = SA_RESTART;
    if (sigaction(signo, &ours, nullptr) == 0) {
      g_ours[signo] = ours;
      g_shown[signo] = current;
    }
  }
}

void remove_termination_handlers() {
  for (int signo : kSignals) {
    if (g_ours[signo].sa_handler != on_signal) continue;
    struct sigaction current;
    if (sigaction(signo, nullptr, &current) == 0 && current.sa_handler == on_signal && !(current.sa_flags & SA_SIGINFO))
      sigaction(signo, &g_shown[signo], nullptr);
    g_ours[signo] = {};
  }
}

const struct sigaction* action_to_install(int signo, const struct sigaction* requested) {
  bool taken = signo > 0 && signo < NSIG && g_ours[signo].sa_handler == on_signal;
  // SIG_DFL whatever the flags: with SA_SIGINFO the same field holds it (sa_sigaction),
  // as when PHP puts the default back to die by a signal it caught.
  bool default_action = requested && requested->sa_handler == SIG_DFL;
  if (!taken || !default_action) return requested;
  g_shown[signo] = *requested;
  return &g_ours[signo];
}

void show_host_disposition(int signo, struct sigaction* action) {
  if ((action->sa_flags & SA_SIGINFO) || action->sa_handler != on_signal || signo <= 0 || signo >= NSIG) return;
  int restorer_flag = action->sa_flags & kRestorerFlag;
  void (*restorer)(void) = action->sa_restorer;
  *action = g_shown[signo];
  action->sa_flags |= restorer_flag;
  if (restorer_flag) action->sa_restorer = restorer;
}

void resume_deferred_signal() {
  int signo = g_deferred_signal.exchange(0, std::memory_order_relaxed);
  if (signo == 0) return;
  g_flush();
  die_by(signo);
}

}  // namespace nmprof
