// Why the kernel refused to let nmprof ptrace a process, and what to do about it:
// another user's process, a process that is not dumpable, Yama's ptrace_scope,
// or a root without CAP_SYS_PTRACE (a container started without it).
#pragma once

#include <sys/types.h>

#include <string>

#include "attach/target_process.h"

namespace nmprof::attach {

struct PtraceFacts {
  pid_t pid = 0;
  uid_t nmprof_euid = 0;
  gid_t nmprof_egid = 0;
  uid_t target_euid = 0;
  gid_t target_egid = 0;
  bool target_dumpable = true;   // /proc/<pid> belongs to the target's user, not root
  int ptrace_scope = 0;          // kernel.yama.ptrace_scope, 0 without Yama
  bool has_cap_sys_ptrace = false;
  pid_t tracer = 0;               // TracerPid: a debugger, strace or another nmprof has it
  std::string tracer_name;        // its command name
};

// The process tracing `pid` (its thread `tid`, if not 0): 0 when none does.
pid_t tracer_of(pid_t pid, pid_t tid = 0);

// The one-line message for a refused PTRACE_SEIZE.
std::string explain_ptrace_denied(const PtraceFacts& facts);

// The same, with the facts read from /proc for `target` (its thread `tid`, if not
// 0) and nmprof itself.
std::string explain_ptrace_denied(const TargetProcess& target, pid_t tid = 0);

}  // namespace nmprof::attach
