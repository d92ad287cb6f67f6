// What stopping a thread inside a system call does to that call, and how to give
// the call back unchanged. A thread that ptrace interrupts in a blocking call sees
// the call end with -ERESTARTSYS, -ERESTARTNOHAND, -ERESTARTNOINTR or
// -ERESTART_RESTARTBLOCK: the kernel restarts those when the thread resumes with
// no signal handler to run (orig_rax still naming the call; ptrace(2), "Syscall
// restart"). A few calls (epoll_wait, sigtimedwait, semop, reads with SO_RCVTIMEO;
// signal(7)) end with plain -EINTR instead, which the program would see: for those
// that did nothing on EINTR, the saved result becomes -ERESTARTNOHAND, so that the
// kernel restarts them as well (and a real signal handler still sees EINTR).
#pragma once

#include <cstdint>

namespace nmprof::attach {

// A call a program blocks in while idle (read, nanosleep, futex, epoll_wait ...):
// it holds no C library or loader lock there, so running code on it is safe.
bool is_idle_syscall(int64_t number);

// The result a stopped thread's registers should resume with: `result` itself,
// or -ERESTARTNOHAND for a call that ended with -EINTR and is safe to restart.
int64_t restartable_result(int64_t number, int64_t result);

}  // namespace nmprof::attach
