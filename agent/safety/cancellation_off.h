// Much of what the agent does from inside a hook is a cancellation point: open,
// read, write, pwrite, close, nanosleep. A thread of the host cancelled (deferred)
// while in one would be unwound through the agent's frames, whose C++ personality
// aborts the process, or would leave the recorder's lock held. While one of these
// lives, the calling thread cannot be cancelled; a pending cancellation is acted on
// at the host's next cancellation point, as it would have been without the agent.
//
// A thread whose cancellation is asynchronous is cancelled when cancellation is on
// again (restore_cancellation), so glibc's unwind goes through the agent's frames
// to the host's. Those frames must have nothing left to clean up (declare a
// CancellationOff first): the agent's landing pads cannot run under glibc's
// unwinder (the static libstdc++'s personality aborts in libgcc_s's context).
#pragma once

#include <pthread.h>

namespace nmprof {

// Puts back the state CancellationOff saved. A request that came meanwhile to a
// thread of asynchronous type is acted on through pthread_testcancel: glibc 2.36
// acting on it in pthread_setcancelstate leaves the thread's result NULL instead
// of PTHREAD_CANCELED, which pthread_join would then report.
inline void restore_cancellation(int state) {
  if (state != PTHREAD_CANCEL_ENABLE) return;
  int type;
  pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &type);
  pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, nullptr);
  if (type == PTHREAD_CANCEL_ASYNCHRONOUS) {
    pthread_testcancel();
    pthread_setcanceltype(type, nullptr);
  }
}

class CancellationOff {
 public:
  CancellationOff() { pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &previous_); }
  ~CancellationOff() noexcept(false) { restore_cancellation(previous_); }
  CancellationOff(const CancellationOff&) = delete;
  CancellationOff& operator=(const CancellationOff&) = delete;

 private:
  int previous_;
};

}  // namespace nmprof
