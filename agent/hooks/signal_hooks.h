// Entry points for the calls that set and tell a program a signal's disposition
// (sigaction, signal): the agent's termination handlers are shown as what they stand
// for, and stay when the program puts that back (termination_signals.h), so that it
// decides as it would without nmprof.
#pragma once

#include <signal.h>

#include "agent/hooks/hook_table.h"
#include "agent/safety/termination_signals.h"

namespace nmprof {

template <int K>
struct SigactionHook {
  static int call(int signo, const struct sigaction* action, struct sigaction* old) {
    int result = hook_target<int (*)(int, const struct sigaction*, struct sigaction*)>(kSigaction, K)(
        signo, action_to_install(signo, action), old);
    if (result == 0 && old) show_host_disposition(signo, old);
    return result;
  }
};

template <int K>
struct SignalHook {
  static sighandler_t call(int signo, sighandler_t handler) {
    struct sigaction requested = {};  // what glibc's signal() asks for
    requested.sa_handler = handler;
    requested.sa_flags = SA_RESTART;
    sigaddset(&requested.sa_mask, signo);
    sighandler_t old =
        hook_target<sighandler_t (*)(int, sighandler_t)>(kSignal, K)(signo, action_to_install(signo, &requested)->sa_handler);
    if (old == SIG_ERR) return old;
    struct sigaction shown = {};
    shown.sa_handler = old;
    show_host_disposition(signo, &shown);
    return shown.sa_handler;
  }
};

}  // namespace nmprof
