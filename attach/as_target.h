// Doing something in the target's place: a forked helper process takes the target's
// credentials and file system view, does one job and hands back a file descriptor.
// Credentials change only in the helper, so nmprof itself keeps its own (it still
// needs them to write the user's files), and no thread or namespace state leaks.
//
// The helper reaches the target's files through /proc/<pid>/root and /proc/<pid>/cwd
// instead of setns(): for HotSpot that is all a mount namespace changes, it works
// from a multi-threaded process and needs no CAP_SYS_ADMIN. net and ipc namespaces
// matter only for OpenJ9, which nmprof does not support.
#pragma once

#include <chrono>
#include <functional>

#include "attach/fd_io.h"
#include "attach/result.h"
#include "attach/target_process.h"

namespace nmprof::attach {

// Directories of the target, opened with nmprof's own privileges before the helper
// takes the target's credentials (root may open any /proc/<pid>/root; the target's
// user, in a user namespace, possibly not).
struct TargetDirs {
  int proc;      // /proc/<pid>
  int root;      // the target's root directory
  int cwd;       // its working directory, -1 if it cannot be opened
  int self_fds;  // the helper's own /proc/self/fd (for safe_file::open_owned)
};

// A job returns a descriptor to hand back, or an empty UniqueFd when it has none.
using TargetJob = std::function<Result<UniqueFd>(const TargetDirs&)>;

// Runs `job` in a forked helper. When nmprof is root, the helper first chroots into
// the target's root directory (symbolic links then resolve as they do for the target,
// never into the host's files) and switches to the target's groups, egid and euid.
// A non-root nmprof must already have the target's credentials (check_attach_permission).
// The helper then has no capabilities left, even when the target is root, and can
// gain none (no_new_privs).
//
// The target's user can stop or kill the helper: after `timeout` without an answer
// it is killed, and when it died without answering, `if_killed` (when given) runs in
// a new helper to undo what the job may have left behind.
Result<UniqueFd> run_as_target(const TargetProcess& target, const TargetJob& job,
                               std::chrono::milliseconds timeout = std::chrono::seconds(30),
                               const TargetJob& if_killed = {});

}  // namespace nmprof::attach
