// One thread of a process, held by ptrace for a moment to run a function on it.
// Only that thread stops; the others run on. The thread is seized
// (PTRACE_SEIZE + PTRACE_INTERRUPT, which, unlike PTRACE_ATTACH, sends no
// SIGSTOP), and released with every register (general, FPU/SSE/AVX state), every
// byte nmprof wrote and every signal that arrived meanwhile as they were. Every
// wait ends by a deadline, or soon after a termination signal (tracee_wait.h): a
// call that does not return is given up, and the thread put back as it was.
//
//   TraceSignals held;  // for as long as threads are seized
//   auto thread = SeizedThread::seize(target, tid, deadline);
//   auto handle = thread->call(dlopen_address, "/path/libx.so", RTLD_NOW, deadline);
//   thread->release();  // also done by the destructor
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attach/fd_io.h"
#include "attach/result.h"
#include "attach/target_process.h"

namespace nmprof::attach {

class SeizedThread {
 public:
  // Errors: permission (with its reason and fix), the process exited, the thread did
  // not stop by `deadline`, a termination signal.
  static Result<SeizedThread> seize(const TargetProcess& target, pid_t tid, Clock::time_point deadline);
  SeizedThread(SeizedThread&& other) noexcept;
  SeizedThread& operator=(SeizedThread&&) = delete;
  ~SeizedThread() { release(); }

  pid_t tid() const { return tid_; }
  // The registers where the thread stopped (with a -EINTR of an interrupted call
  // already turned into a restart, interrupted_syscall.h).
  const user_regs_struct& registers() const { return saved_; }
  // How long the thread has been stopped.
  std::chrono::microseconds stopped_for() const;

  // The target's memory (/proc/<pid>/mem), open for reading and writing.
  int memory() const { return memory_.get(); }

  // Calls function(address of a copy of `text`, second) on the thread, on its
  // own stack below the red zone, and returns what it returned (rax). A call still
  // running at `deadline`, or a second after a termination signal, is given up: the
  // thread is stopped and put back, and the error says what that leaves (`what`
  // names the call).
  Result<uint64_t> call(uint64_t function, std::string_view text, uint64_t second, Clock::time_point deadline,
                        std::string_view what);

  // Reads a NUL-terminated string of the target (at most `max` bytes).
  std::string read_string(uint64_t address, size_t max = 512) const;

  // Puts everything back and lets the thread go (with any signal held back).
  void release();

 private:
  SeizedThread(const TargetProcess& target, pid_t tid) : pid_(target.pid), tid_(tid) {}
  Result<void> stop(Clock::time_point deadline);
  Result<void> run_until_return(uint64_t* result, Clock::time_point deadline, std::string_view what);
  std::string describe_call(std::string_view what) const;
  Error ended_during(int status, std::string_view what) const;
  bool restore();

  pid_t pid_;
  pid_t tid_;
  bool attached_ = false;
  UniqueFd memory_;  // /proc/<pid>/mem
  user_regs_struct saved_{};
  std::vector<char> saved_fpu_;  // the NT_X86_XSTATE (or NT_PRFPREG) register set
  int fpu_set_ = 0;
  bool registers_saved_ = false;  // the thread stopped, and saved_ is its state
  std::vector<int> held_signals_;  // arrived during a call; delivered at release
  std::chrono::steady_clock::time_point stopped_at_;
};

}  // namespace nmprof::attach
