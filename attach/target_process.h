// Facts about the process nmprof attaches to, read from /proc before anything else
// (credentials, namespace pid), and the check that nmprof is allowed to attach.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "attach/proc_status.h"
#include "attach/result.h"

namespace nmprof::attach {

struct TargetProcess {
  pid_t pid = 0;         // as nmprof sees it: for kill() and /proc/<pid>
  pid_t nspid = 0;       // as the target sees itself: names .java_pid<nspid>, .attach_pid<nspid>
  std::string name;      // /proc/<pid>/comm, for messages
  ProcessStatus status;  // credentials and signal dispositions when inspected
};

// Errors: no such process.
Result<TargetProcess> inspect_process(pid_t pid);

// The state letter of /proc/<pid>/stat ('S', 'R', 'T', 'Z' ...), 'X' when it is gone.
char process_state(pid_t pid);
// Gone, or a zombie: it runs no more.
bool has_ended(pid_t pid);

// Whether thread `tid` of process `pid` has ended: a zombie, or gone.
bool thread_has_ended(pid_t pid, pid_t tid);

// HotSpot accepts a client whose uid is 0, or whose euid and egid both equal its own,
// and ptrace (any other process) asks as much of a client without CAP_SYS_PTRACE. A
// non-root nmprof therefore needs the target's exact credentials. `kind` names the
// target in the message: "JVM", or "process" when nmprof cannot tell.
Result<void> check_attach_permission(const TargetProcess& target, std::string_view kind = "JVM");

// The pid (as nmprof sees it) of the process that is `nspid` in the target's pid
// namespace, or 0 when none is.
pid_t host_pid_of(const TargetProcess& target, pid_t nspid);

// Reads /proc/<pid>/<name>, which needs ptrace read access to the target.
// Errors name the owner or the ptrace restriction, or say the process has exited.
Result<std::string> read_proc_file(const TargetProcess& target, const char* name);

// "user 'bob' (uid 1001, gid 1001)", or "uid 1001, gid 1001" for a uid without a name.
std::string describe_credentials(uid_t uid, gid_t gid);

}  // namespace nmprof::attach
