// What nmprof does with the signals people and service managers send: `kill`,
// systemctl, php-fpm's and nginx's reload and reopen signals (USR1, USR2), a
// terminal's SIGQUIT and SIGWINCH. Their default action would end nmprof and leave
// its command orphaned, or a recording running in an attached process: `run`
// forwards them to its command (profile_signals.h), `attach` stops its one-shot
// recording cleanly on them (attach_command.cpp), and nmprof writes the profile it
// holds before it ends by them (profile_signals.h). It never dies of SIGPIPE or
// SIGXFSZ either.
#pragma once

#include <signal.h>

namespace nmprof::cli {

// The signals `run` forwards: those that end a process by default, and SIGWINCH.
inline constexpr int kForwardedSignals[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGUSR1,
                                            SIGUSR2, SIGALRM, SIGPIPE, SIGWINCH};
// The signals that stop attach's one-shot recording: those that end a process by default.
inline constexpr int kStoppingSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE};

// kStoppingSignals held (blocked) while this lives, for a change a handler of theirs
// must see whole; they are delivered after it.
class StoppingSignalsHeld {
 public:
  StoppingSignalsHeld() {
    sigset_t stopping;
    sigemptyset(&stopping);
    for (int signo : kStoppingSignals) sigaddset(&stopping, signo);
    sigprocmask(SIG_BLOCK, &stopping, &saved_);
  }
  ~StoppingSignalsHeld() { sigprocmask(SIG_SETMASK, &saved_, nullptr); }
  StoppingSignalsHeld(const StoppingSignalsHeld&) = delete;
  StoppingSignalsHeld& operator=(const StoppingSignalsHeld&) = delete;

 private:
  sigset_t saved_;
};

// Whether the kernel raised the signal for nmprof's own doing: the SIGPIPE of a write
// to a closed pipe (it names nmprof as the sender), as opposed to one sent to it.
bool raised_by_own_write(int signo, const siginfo_t* info);

// Writes to a closed standard output or error (`nmprof report | head`, a terminal
// gone) fail with EPIPE, and writes past `ulimit -f` with EFBIG, instead of killing
// nmprof (SIGPIPE, SIGXFSZ) halfway through a profile: it then says so and keeps the
// recording. A handler that does nothing, not SIG_IGN: exec resets handlers, so a
// command nmprof starts gets the signals' default actions; an inherited SIG_IGN is
// left as it is, for the command to inherit too.
void survive_failed_writes();

}  // namespace nmprof::cli
