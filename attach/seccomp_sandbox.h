// Whether a process runs under seccomp: a filter of its own, systemd's
// SystemCallFilter=, a container's profile. A filter refuses the calls it was not
// written for, often by killing the process (SIGSYS), and an attach makes calls the
// program never makes: the injected dlopen (openat, read, mmap, mprotect, close), the
// agent's start and each request (its writer thread, its recording, its reply file),
// and the resumption through restart_syscall of a sleep that ptrace interrupted.
// Filters belong to threads: each thread's /proc/<pid>/task/<tid>/status is read.
//
//   if (auto refused = check_native_sandbox(target, options.force); !refused) fail(...);
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "attach/result.h"
#include "attach/target_process.h"

namespace nmprof::attach {

struct SeccompSandbox {
  int filtered_threads = 0;  // threads with a filter (Seccomp: 2)
  int strict_threads = 0;    // threads in strict mode (Seccomp: 1): read, write, exit and sigreturn only
  int threads = 0;           // threads looked at
  int filters = -1;          // the most filters one thread has; -1 when the kernel does not say (before 5.9)
};

// The sandbox of process `pid`, or nullopt when none of its threads has one.
std::optional<SeccompSandbox> seccomp_sandbox_of(pid_t pid);

// The Seccomp: mode of one thread (0 none, 1 strict, 2 filter; 0 when unreadable).
int seccomp_mode_of(pid_t pid, pid_t tid);

// Refuses a ptrace attach to a process under seccomp in one line, saying what the
// sandbox is and how to profile the process (`nmprof run`, or --force when `forcible`);
// with `force`, refuses only a process whose every thread is in strict mode, where
// nothing could run the agent.
Result<void> check_native_sandbox(const TargetProcess& target, bool force);

// For a JVM, which loads the agent itself: the warning to print, "" when there is no
// filter.
std::string jvm_sandbox_warning(const TargetProcess& target);

}  // namespace nmprof::attach
