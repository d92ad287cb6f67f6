// What nmprof does with the signals people and service managers send it (signals.h:
// SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE, SIGWINCH)
// until its profile is written: `run` from its command's start, `attach dump` and
// `attach stop` from the agent's reply (which takes what it recorded out of the
// target: nmprof is then all that holds it).
//
// While run's command runs, they are forwarded to it; a terminal's Ctrl-C reaches it
// directly, being in the same process group, so only signals sent by a process are.
// With no command (it has ended, or an attach has none), a signal that asks nmprof to
// end (SIGINT, SIGTERM, SIGHUP, SIGQUIT) no longer kills nmprof in the middle of
// collecting or writing the profile, losing it and leaving its staging files behind:
// one line says the profile is being written, and nmprof ends by that signal once it
// is (end_by_held_signal), so that a shell sees the interruption. The others have no
// one to go to then, and are dropped.
#pragma once

#include <sys/types.h>

#include <signal.h>

#include <functional>
#include <iterator>

#include "cli/signals.h"

namespace nmprof::cli {

class ProfileSignals {
 public:
  ProfileSignals();   // installs the handler
  ~ProfileSignals();  // puts back the dispositions nmprof had
  ProfileSignals(const ProfileSignals&) = delete;
  ProfileSignals& operator=(const ProfileSignals&) = delete;

  // Around fork: the signals wait until the command's pid is known (set_command).
  void block() const;
  void unblock() const;
  // In the child before exec: the dispositions and mask nmprof had, so that an
  // inherited SIG_IGN stays ignored. Async-signal-safe.
  void restore_in_child() const;
  // The command's pid while it runs, 0 once it has ended.
  void set_command(pid_t pid);

  // The profile is written, and only uploads wait: a signal that asks nmprof to end
  // says nothing of its own from now on (the uploader names what it cut short).
  // Returns whether one came since the command ended (one that nmprof ignored when it
  // started, under nohup, does not count), for the uploads' flush (Uploader::finish).
  std::function<bool()> profile_written() const;

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
