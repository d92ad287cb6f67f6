// A HotSpot JVM to attach to: nmprof's client for the JVM's attach mechanism.
// Every request uses a new connection, made by a helper acting as the target
// (as_target.h), so attaching works across users and container boundaries.
//
//   auto vm = HotSpotVm::find(pid);
//   if (!vm) fail(vm.error().message);
//   auto code = vm->load_agent("/usr/lib/nmprof/libnmprof.so", "interval=1m,file=/tmp/x.jfr");
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <utility>

#include "attach/protocol.h"
#include "attach/result.h"
#include "attach/target_process.h"
#include "attach/timeouts.h"

namespace nmprof::attach {

class HotSpotVm {
 public:
  // Checks that `pid` is a HotSpot JVM that nmprof may attach to. Does not contact
  // the JVM yet. Errors: no such process, permission denied, not a JVM, OpenJ9,
  // attach disabled.
  static Result<HotSpotVm> find(pid_t pid, AttachTimeouts timeouts = {});

  const TargetProcess& process() const { return target_; }

  // Loads a JVMTI agent library: `load <library> true <options>`. `library` is an
  // absolute path as the target sees it (inside its container, if any). Returns
  // Agent_OnAttach's result: 0 = success, other values are the agent's refusal (the
  // JVM has unloaded the library again). Errors: the JVM did not load the library
  // (its reason is in the message), dynamic loading is disabled, timeouts.
  Result<int> load_agent(std::string_view library, std::string_view options) const;

  // Runs a diagnostic command, e.g. "VM.version" or "VM.flags -all"; its output.
  Result<std::string> jcmd(std::string_view command_line) const;

  // One request on a new connection, and the JVM's reply as sent.
  Result<Reply> request(std::string_view command, const Arguments& args) const;

 private:
  HotSpotVm(TargetProcess target, AttachTimeouts timeouts) : target_(std::move(target)), timeouts_(timeouts) {}

  TargetProcess target_;
  AttachTimeouts timeouts_;
};

}  // namespace nmprof::attach
