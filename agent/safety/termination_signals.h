// SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM and SIGPIPE end a
// process without running exit handlers when it leaves them at their default action
// (`prog | head` dies of SIGPIPE). For those signals only, the agent installs
// a handler that writes the recording out and then lets the signal do what it would
// have done. A host that installs its own handler (a JVM, a shell) replaces ours,
// and then ends through exit(), where the recording is written anyway.
#pragma once

#include <signal.h>

namespace nmprof {

// flush: writes the recording; returns false if it cannot now (the signal
// interrupted the recorder on this thread); the agent then calls
// resume_deferred_signal() when the interrupted code has left the recorder.
void install_termination_handlers(bool (*flush)());
// Puts back, where the agent's handler is still installed, the action it stands for.
void remove_termination_handlers();
void resume_deferred_signal();
// What the host is told when it asks for a signal's disposition: where the agent's
// handler is installed, the default action it stands for, with the flags and mask
// the host last gave it. Programs decide on it:
// Python raises KeyboardInterrupt on SIGINT only if it finds SIGINT at its default
// action. (The crash handlers of fatal_signals.h stay visible: a program's own crash
// handler that chains to the one it found is how the recording gets written then.)
void show_host_disposition(int signo, struct sigaction* action);
// What to install when the host asks for `requested`: the agent's handler again
// where the host puts back the default action it was shown (a program that sets
// SIG_IGN around a child and then restores what it found), else `requested`.
const struct sigaction* action_to_install(int signo, const struct sigaction* requested);

}  // namespace nmprof
