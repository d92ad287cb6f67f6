// A small lock for the agent's sampled path: no system call while uncontended, no
// allocation, and it records its owner so a signal handler can tell whether it
// interrupted the thread that holds it.
#pragma once

#include <sched.h>
#include <unistd.h>

#include <atomic>

namespace nmprof {

// The id a SpinLock records for the calling thread (gettid: a system call, so
// callers on the sampled path pass the id their thread state keeps).
inline int this_thread_id() { return static_cast<int>(gettid()); }

class SpinLock {
 public:
  // self: the caller's thread id, never 0 (0 means free).
  void lock(int self) {
    for (int spins = 0;; spins++) {
      int expected = 0;
      if (owner_.compare_exchange_weak(expected, self, std::memory_order_acquire, std::memory_order_relaxed))
        return;
      if (spins < 64)
        __builtin_ia32_pause();
      else
        sched_yield();
    }
  }
  bool try_lock(int self) {
    int expected = 0;
    return owner_.compare_exchange_strong(expected, self, std::memory_order_acquire, std::memory_order_relaxed);
  }
  void unlock() { owner_.store(0, std::memory_order_release); }
  int owner() const { return owner_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int> owner_{0};  // thread id of the holder, 0 when free
};

}  // namespace nmprof
