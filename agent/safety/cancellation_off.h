// Much of what the agent does from inside a hook is a cancellation point: open,
// read, write, pwrite, close, nanosleep. A thread of the host cancelled (deferred)
// while in one would be unwound through the agent's frames, whose C++ personality
// aborts the process, or would leave the recorder's lock held. While one of these
// lives, the calling thread cannot be cancelled; a pending cancellation is acted on
// at the host's next cancellation point, as it would have been without the agent.
// A thread whose cancellation is asynchronous is cancelled by the destructor itself
// (glibc acts on a pending request when cancellation is enabled again), so glibc's
// unwind must go through the agent's frames to the host's: the destructor may throw
// it, and must run with nothing else of the agent's left to clean up (declare it
// first), since the agent's own landing pads cannot run under glibc's unwinder
// (its personality is the static libstdc++'s, which aborts in libgcc_s's context).
#pragma once

#include <pthread.h>

namespace nmprof {

class CancellationOff {
 public:
  CancellationOff() { pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &previous_); }
  ~CancellationOff() noexcept(false) { pthread_setcancelstate(previous_, nullptr); }
  CancellationOff(const CancellationOff&) = delete;
  CancellationOff& operator=(const CancellationOff&) = delete;

 private:
  int previous_;
};

}  // namespace nmprof
