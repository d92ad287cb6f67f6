// What stopping a thread inside a system call does to that call, and how to give
// the call back unchanged. A thread that ptrace interrupts in a blocking call sees
// the call end with -ERESTARTSYS, -ERESTARTNOHAND, -ERESTARTNOINTR or
// -ERESTART_RESTARTBLOCK: the kernel restarts those when the thread resumes with
// no signal handler to run (orig_rax still naming the call; ptrace(2), "Syscall
// restart"). A few calls (epoll_wait, sigtimedwait, semop, reads with SO_RCVTIMEO;
// signal(7)) end with plain -EINTR instead, which the program would see: for those
// that did nothing on EINTR, the saved result becomes -ERESTARTNOHAND, so that the
// kernel restarts them as well (and a real signal handler still sees EINTR).
//
// -ERESTART_RESTARTBLOCK (a sleep, or a wait with a timeout) resumes through a call
// of its own, restart_syscall, which a seccomp filter sees and may refuse: a thread
// under a filter is not stopped in such a call when nmprof can help it, and when it
// was, the call itself is made again instead (its timeout starts over).
#pragma once

#include <sys/user.h>

#include <cstdint>

namespace nmprof::attach {

// A call a program blocks in while idle (read, nanosleep, futex, epoll_wait ...):
// it holds no C library or loader lock there, so running code on it is safe.
bool is_idle_syscall(int64_t number);

// The result a stopped thread's registers should resume with: `result` itself,
// or -ERESTARTNOHAND for a call that ended with -EINTR and is safe to restart.
int64_t restartable_result(int64_t number, int64_t result);

// Whether a call (its number and six arguments, as /proc/<pid>/task/<tid>/syscall
// shows them) resumes through restart_syscall when ptrace interrupts it: nanosleep,
// clock_nanosleep, poll with a timeout, a futex wait with one, restart_syscall itself.
bool may_resume_through_restart_syscall(int64_t number, const uint64_t (&args)[6]);

// Whether a thread stopped where `regs` say resumes through restart_syscall (a call
// of its own, which was not restart_syscall already).
bool resumes_through_restart_syscall(const user_regs_struct& regs);

// Sets such a thread to make its call again, as itself (its timeout starting over).
void restart_as_itself(user_regs_struct& regs);

}  // namespace nmprof::attach
