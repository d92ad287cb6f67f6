// The agent's background writer thread, as little visible to the host as a thread
// can be: created on a sample once the host has threads of its own (recorder.cpp
// says why not before), detached, named
// "nmprof writer", with every signal blocked (glibc's own set*id signal still
// reaches it, so setuid() in the host keeps working), never cancelled (nobody else
// has its handle), and gone at exec. A host whose main thread calls pthread_exit()
// would wait for it forever: the thread ends when it is the only one left, and
// glibc then ends the process as the host's last thread would have (exit(0)).
#pragma once

#include <atomic>
#include <cstdint>

namespace nmprof {

// Starts body(arg) on the writer thread: 0, or the error number when nothing was
// started (the system refused a thread: EAGAIN at RLIMIT_NPROC, pids.max, threads-max).
int start_writer_thread(void* (*body)(void*), void* arg);
// Whether the calling thread is the last of the process (false when unknown).
bool only_thread_left();

// Sleeping on and waking an atomic word, without a lock (async-signal-safe).
void wait_while(const std::atomic<uint32_t>& word, uint32_t value, int timeout_ms);
void wake_all(std::atomic<uint32_t>& word);

// How sampling threads and the background writer thread signal each other.
struct WriterSignals {
  // 0 not started, kRunning, kNone (it failed or ended, or the JVM's flusher
  // writes), kToEnd (asked to end).
  static constexpr int kRunning = 1, kNone = 2, kToEnd = 3;
  std::atomic<int> state{0};
  std::atomic<int> tid{0};  // the thread's id once it runs

  // Futex words: a sampling thread asks for a write, and waits for one when its
  // stripe is full.
  std::atomic<uint32_t> write_wanted{0};
  std::atomic<uint32_t> writes_done{0};
};

}  // namespace nmprof
