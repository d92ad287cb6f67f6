// Waiting for a thread nmprof traces to stop, bounded by a deadline and by the user:
// nmprof stays killable while the target runs its call. Termination signals
// (SIGINT, SIGTERM, SIGHUP, SIGQUIT) are held back while a thread of the target is
// in nmprof's hands (TraceSignals), seen pending by the wait, which then ends so that
// nmprof can put the thread back before the signal takes effect.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include "attach/fd_io.h"

namespace nmprof::attach {

// Blocks the termination signals and SIGCHLD (which announces a tracee's stops)
// while it lives; a termination signal that came meanwhile is delivered at its end.
class TraceSignals {
 public:
  TraceSignals();
  ~TraceSignals();
  TraceSignals(const TraceSignals&) = delete;
  TraceSignals& operator=(const TraceSignals&) = delete;

 private:
  sigset_t old_;
};

// A termination signal is pending (held back by TraceSignals).
bool termination_requested();

enum class WaitEnd {
  kStopped,      // *status is the stop
  kExited,       // the thread is gone
  kTimedOut,
  kInterrupted,  // termination_requested(), and `interruptible`
};

// Waits for the traced thread `tid` to stop (waitpid, __WALL), until `deadline`.
WaitEnd wait_for_stop(pid_t tid, int* status, Clock::time_point deadline, bool interruptible = true);

}  // namespace nmprof::attach
