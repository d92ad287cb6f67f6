// A process that is not a JVM (a native program, PHP): nmprof loads its agent into
// it with ptrace, without gdb. One thread stops for a moment at a safe point (its
// whole stack in the program's own code, but for an idle call at its top: nothing
// on it may hold a lock of the C library, the loader, an allocator or the agent;
// safe_point.h), calls the target's own dlopen, then the agent's entry point, and
// runs on as it was. Every request (start, status, dump, stop) is such a call: only
// who may ptrace the process can talk to the agent, and the agent listens on
// nothing. Each request ends by its timeout (a call still running then is given
// up and the thread put back), or soon after Ctrl-C or SIGTERM.
//
//   auto process = NativeProcess::find(pid, std::chrono::seconds(10));
//   auto code = process->load_agent("/usr/lib/nmprof/libnmprof.so", "start,nativemem=1m,...");
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string_view>
#include <vector>

#include "attach/result.h"
#include "attach/target_process.h"

namespace nmprof::attach {

// The descendants of `pid` (children, theirs, ...) that have an nmprof agent
// loaded: forked while the agent was in `pid`, and not exec'd since.
std::vector<pid_t> descendants_with_nmprof(pid_t pid);

class NativeProcess {
 public:
  // Checks that `pid` is a dynamically linked process that is not stopped, and not
  // under seccomp unless `force` (seccomp_sandbox.h). `timeout`: how long to wait for
  // a thread to reach a safe point.
  static Result<NativeProcess> find(pid_t pid, std::chrono::milliseconds timeout, bool force = false);

  const TargetProcess& process() const { return target_; }

  // Loads `library` (a path as the target sees it) unless an nmprof agent is
  // loaded already, and passes it `request` (attach_request.h). Returns the
  // agent's answer code. Errors: ptrace refused, dlopen failed (with dlerror()),
  // no safe point within the timeout, a call given up at the timeout (saying what
  // that leaves), a termination signal ("interrupted"), the process exited.
  Result<int> load_agent(std::string_view library, std::string_view request) const;

  // How long the thread was stopped for the last request.
  std::chrono::microseconds last_stop() const { return last_stop_; }

 private:
  NativeProcess(TargetProcess target, std::chrono::milliseconds timeout, bool sandboxed)
      : target_(std::move(target)), timeout_(timeout), sandboxed_(sandboxed) {}

  TargetProcess target_;
  std::chrono::milliseconds timeout_;
  // Under seccomp (and forced): no thread is stopped in a call that would resume
  // through restart_syscall, nor one in strict mode.
  bool sandboxed_;
  mutable std::chrono::microseconds last_stop_{0};
};

}  // namespace nmprof::attach
