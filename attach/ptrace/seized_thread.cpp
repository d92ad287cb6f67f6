#include "attach/ptrace/seized_thread.h"

#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "attach/ptrace/interrupted_syscall.h"
#include "attach/ptrace/ptrace_permission.h"
#include "attach/ptrace/tracee_wait.h"
#include "attach/seccomp_sandbox.h"
#include "common/signal_text.h"

namespace nmprof::attach {
namespace {

constexpr uint64_t kRedZone = 128;              // below rsp, the interrupted code's own (SysV ABI)
constexpr size_t kMaxFpuState = 64 * 1024;       // XSAVE area, with room for future extensions
constexpr unsigned long long kDirectionFlag = 1 << 10;
// After a termination signal, how long a running call may still take to return.
constexpr auto kGraceAfterSignal = std::chrono::seconds(1);
// An interrupted thread stops at once, unless the kernel is busy on its behalf.
constexpr auto kStopWait = std::chrono::seconds(5);

Error exited(pid_t pid) { return Error{"process " + std::to_string(pid) + " exited during the attach"}; }

Error interrupted() { return Error{"interrupted"}; }

bool is_fault(int signal) { return signal == SIGSEGV || signal == SIGBUS || signal == SIGILL || signal == SIGFPE; }

}  // namespace

SeizedThread::SeizedThread(SeizedThread&& other) noexcept
    : pid_(other.pid_),
      tid_(other.tid_),
      attached_(other.attached_),
      memory_(std::move(other.memory_)),
      saved_(other.saved_),
      saved_fpu_(std::move(other.saved_fpu_)),
      fpu_set_(other.fpu_set_),
      registers_saved_(other.registers_saved_),
      held_signals_(std::move(other.held_signals_)),
      stopped_at_(other.stopped_at_) {
  other.attached_ = false;
}

Result<SeizedThread> SeizedThread::seize(const TargetProcess& target, pid_t tid, Clock::time_point deadline) {
  SeizedThread thread(target, tid);
  if (ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
    if (errno == ESRCH) return exited(target.pid);
    if (errno == EPERM || errno == EACCES) return Error{explain_ptrace_denied(target, tid)};
    return Error{"cannot ptrace process " + std::to_string(target.pid) + ": " + strerror(errno)};
  }
  thread.attached_ = true;
  if (auto stopped = thread.stop(deadline); !stopped) return stopped.error();
  return thread;
}

// Interrupts the thread and saves its state. Signals that arrive first are
// delivered as they would have been; the thread then stops in their handler.
Result<void> SeizedThread::stop(Clock::time_point deadline) {
  if (ptrace(PTRACE_INTERRUPT, tid_, nullptr, nullptr) != 0) return exited(pid_);
  for (;;) {
    int status = 0;
    switch (wait_for_stop(tid_, &status, deadline)) {
      case WaitEnd::kStopped:
        break;
      case WaitEnd::kExited:
        attached_ = false;
        return exited(pid_);
      case WaitEnd::kTimedOut:
        return Error{"thread " + std::to_string(tid_) + " of process " + std::to_string(pid_) +
                     " did not stop in time (busy in the kernel?)"};
      case WaitEnd::kInterrupted:
        return interrupted();
    }
    if (status >> 16 == PTRACE_EVENT_STOP) break;
    ptrace(PTRACE_CONT, tid_, nullptr, WSTOPSIG(status));
  }
  stopped_at_ = std::chrono::steady_clock::now();
  if (ptrace(PTRACE_GETREGS, tid_, nullptr, &saved_) != 0) return exited(pid_);
  saved_fpu_.resize(kMaxFpuState);
  iovec fpu{saved_fpu_.data(), saved_fpu_.size()};
  fpu_set_ = NT_X86_XSTATE;
  if (ptrace(PTRACE_GETREGSET, tid_, NT_X86_XSTATE, &fpu) != 0) {
    fpu_set_ = NT_PRFPREG;
    fpu.iov_len = sizeof(user_fpregs_struct);
    if (ptrace(PTRACE_GETREGSET, tid_, NT_PRFPREG, &fpu) != 0) return exited(pid_);
  }
  saved_fpu_.resize(fpu.iov_len);
  registers_saved_ = true;
  if (static_cast<int64_t>(saved_.orig_rax) >= 0) {
    saved_.rax = restartable_result(static_cast<int64_t>(saved_.orig_rax), static_cast<int64_t>(saved_.rax));
    // Stopped in a sleep after all (it began one after nmprof looked): under a filter
    // that may refuse restart_syscall, the sleep is made again.
    if (resumes_through_restart_syscall(saved_) && seccomp_mode_of(pid_, tid_) != 0) restart_as_itself(saved_);
  }
  memory_ = UniqueFd(open(("/proc/" + std::to_string(pid_) + "/mem").c_str(), O_RDWR | O_CLOEXEC));
  if (!memory_) return Error{"cannot open the memory of process " + std::to_string(pid_) + ": " + strerror(errno)};
  return {};
}

std::chrono::microseconds SeizedThread::stopped_for() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - stopped_at_);
}

Result<uint64_t> SeizedThread::call(uint64_t function, std::string_view text, uint64_t second,
                                    Clock::time_point deadline, std::string_view what) {
  // [return address 0][text\0] below the red zone, 16-byte aligned at the call.
  uint64_t text_at = (saved_.rsp - kRedZone - text.size() - 1) & ~uint64_t{15};
  uint64_t frame = text_at - 8;
  size_t length = saved_.rsp - kRedZone - frame;
  std::string original(length, '\0');
  if (pread(memory_.get(), original.data(), length, static_cast<off_t>(frame)) != static_cast<ssize_t>(length))
    return Error{"cannot read the stack of thread " + std::to_string(tid_) + ": " + strerror(errno)};
  std::string frame_bytes(length, '\0');  // the return address 0: returning there faults, and nmprof sees it
  frame_bytes.replace(text_at - frame, text.size(), text);
  if (pwrite(memory_.get(), frame_bytes.data(), length, static_cast<off_t>(frame)) != static_cast<ssize_t>(length))
    return Error{"cannot write to the stack of thread " + std::to_string(tid_) + ": " + strerror(errno)};

  user_regs_struct regs = saved_;
  regs.rip = function;
  regs.rdi = text_at;
  regs.rsi = second;
  regs.rax = 0;
  regs.rsp = frame;
  regs.orig_rax = static_cast<unsigned long long>(-1);  // not in a system call: nothing to restart now
  regs.eflags &= ~kDirectionFlag;
  uint64_t result = 0;
  Result<void> ran =
      ptrace(PTRACE_SETREGS, tid_, nullptr, &regs) == 0 ? run_until_return(&result, deadline, what) : exited(pid_);
  bool written_back =
      attached_ && pwrite(memory_.get(), original.data(), length, static_cast<off_t>(frame)) == static_cast<ssize_t>(length);
  if (!ran) return ran.error();
  if (!written_back) return Error{"cannot restore the stack of thread " + std::to_string(tid_)};
  return result;
}

// Runs the thread until the called function returns to address 0. Signals that
// arrive meanwhile are held back, to be delivered when the thread is released. A
// call still running at the deadline is stopped where it is (PTRACE_INTERRUPT), so
// that release() puts the thread back as it was before the call.
Result<void> SeizedThread::run_until_return(uint64_t* result, Clock::time_point deadline, std::string_view what) {
  const char* why = "did not return in time";
  bool interruptible = true;
  bool giving_up = false;
  bool running = false;
  int signal = 0;
  for (;;) {
    if (!running && ptrace(PTRACE_CONT, tid_, nullptr, signal) != 0) return exited(pid_);
    running = true;
    signal = 0;
    int status = 0;
    switch (wait_for_stop(tid_, &status, deadline, interruptible)) {
      case WaitEnd::kInterrupted:  // the call gets a moment to end, then is given up
        interruptible = false;
        why = "had not returned when nmprof was told to end";
        deadline = std::min(deadline, Clock::now() + kGraceAfterSignal);
        continue;
      case WaitEnd::kTimedOut:
        if (giving_up || ptrace(PTRACE_INTERRUPT, tid_, nullptr, nullptr) != 0)
          return Error{describe_call(what) + " " + why +
                       "; nmprof could not stop it to put it back: the process is likely to crash when the call "
                       "returns"};
        giving_up = true;
        deadline = Clock::now() + kStopWait;
        continue;
      case WaitEnd::kExited:
        attached_ = false;
        return ended_during(status, what);
      case WaitEnd::kStopped:
        running = false;
        break;
    }
    if (giving_up && status >> 16 == PTRACE_EVENT_STOP)
      return Error{describe_call(what) + " " + why +
                   "; nmprof put the thread back where it was, but the call was abandoned midway: a lock it had "
                   "taken may stay held, so the process may hang (in dlopen, dlclose or malloc) from now on; "
                   "restart it if it does"};
    if (status >> 16 != 0) continue;  // a group-stop or interrupt: go on, the stop takes over at release
    int arrived = WSTOPSIG(status);
    user_regs_struct now{};
    if (ptrace(PTRACE_GETREGS, tid_, nullptr, &now) != 0) return exited(pid_);
    if (arrived == SIGSEGV && now.rip == 0) {
      *result = now.rax;
      return {};
    }
    if (is_fault(arrived)) return Error{"the call in process " + std::to_string(pid_) + " crashed (signal " +
                                        std::to_string(arrived) + "); nmprof put the thread back as it was"};
    held_signals_.push_back(arrived);
  }
}

// The thread ended while it ran the call: a signal that killed the process is named
// (SIGSYS: a seccomp filter refused a call, which --force risked).
Error SeizedThread::ended_during(int status, std::string_view what) const {
  if (!WIFSIGNALED(status)) return exited(pid_);
  std::string killed = "process " + std::to_string(pid_) + " was killed by " + signal_text(WTERMSIG(status)) +
                       " during " + describe_call(what);
  if (WTERMSIG(status) == SIGSYS) killed += ": its seccomp filter refused one of the call's system calls";
  return Error{killed};
}

std::string SeizedThread::describe_call(std::string_view what) const {
  return "the call of " + std::string(what) + " on thread " + std::to_string(tid_) + " of process " +
         std::to_string(pid_);
}

std::string SeizedThread::read_string(uint64_t address, size_t max) const {
  std::string text(max, '\0');
  ssize_t n = pread(memory_.get(), text.data(), max, static_cast<off_t>(address));
  text.resize(n > 0 ? strnlen(text.data(), static_cast<size_t>(n)) : 0);
  return text;
}

bool SeizedThread::restore() {
  if (!registers_saved_) return false;
  iovec fpu{saved_fpu_.data(), saved_fpu_.size()};
  return ptrace(PTRACE_SETREGS, tid_, nullptr, &saved_) == 0 &&
         (saved_fpu_.empty() || ptrace(PTRACE_SETREGSET, tid_, fpu_set_, &fpu) == 0);
}

void SeizedThread::release() {
  if (!attached_) return;
  attached_ = false;
  restore();
  // The first signal goes in at once, with the thread's own registers; the others
  // are raised again (their siginfo is lost, their number is not).
  int first = held_signals_.empty() ? 0 : held_signals_.front();
  ptrace(PTRACE_DETACH, tid_, nullptr, first);
  for (size_t i = 1; i < held_signals_.size(); i++) syscall(SYS_tgkill, pid_, tid_, held_signals_[i]);
}

}  // namespace nmprof::attach
