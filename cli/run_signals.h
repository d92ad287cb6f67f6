// What `run` does with the signals people and service managers send it (signals.h:
// SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE, SIGWINCH),
// from its command's start until its profile is written.
//
// While the command runs, they are forwarded to it; a terminal's Ctrl-C reaches it
// directly, being in the same process group, so only signals sent by a process are.
// Once it has ended, a signal that asks nmprof to end (SIGINT, SIGTERM, SIGHUP,
// SIGQUIT) no longer kills nmprof in the middle of writing the profile, losing it and
// leaving its staging files behind: one line says the profile is being written, and
// nmprof ends by that signal once it is (end_by_held_signal), so that a shell sees
// the interruption. The others have no one to go to then, and are dropped.
#pragma once

#include <sys/types.h>

#include <signal.h>

#include <iterator>

#include "cli/signals.h"

namespace nmprof::cli {

class RunSignals {
 public:
  RunSignals();   // installs the handler
  ~RunSignals();  // puts back the dispositions nmprof had
  RunSignals(const RunSignals&) = delete;
  RunSignals& operator=(const RunSignals&) = delete;

  // Around fork: the signals wait until the command's pid is known (set_command).
  void block() const;
  void unblock() const;
  // In the child before exec: the dispositions and mask nmprof had, so that an
  // inherited SIG_IGN stays ignored. Async-signal-safe.
  void restore_in_child() const;
  // The command's pid while it runs, 0 once it has ended.
  void set_command(pid_t pid);

  // Once the profile is written (or could not be): ends nmprof by the signal held
  // meanwhile, as its default action would have (without SIGQUIT's core dump).
  // Returns when none came.
  void end_by_held_signal() const;

 private:
  struct sigaction previous_[std::size(kForwardedSignals)];
  sigset_t forwarded_;
  sigset_t previous_mask_;
};

}  // namespace nmprof::cli
