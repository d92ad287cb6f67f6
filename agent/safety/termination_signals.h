// SIGINT, SIGTERM and SIGHUP end a process without running exit handlers when it
// leaves them at their default action. For those signals only, the agent installs
// a handler that writes the recording out and then lets the signal do what it would
// have done. A host that installs its own handler (a JVM, a shell) replaces ours,
// and then ends through exit(), where the recording is written anyway.
#pragma once

namespace nmprof {

// flush: writes the recording; returns false if it cannot now (the signal
// interrupted the recorder on this thread); the agent then calls
// resume_deferred_signal() when the interrupted code has left the recorder.
void install_termination_handlers(bool (*flush)());
void resume_deferred_signal();

}  // namespace nmprof
