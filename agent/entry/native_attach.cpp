// The agent's entry for `nmprof attach` to a process that is not a JVM. nmprof
// loads the library with the target's own dlopen (attach/ptrace/native_process.h),
// then calls nmprof_attach_request on the thread it stopped, once per request
// (start, status, dump, stop; attach_request.h), and gets the answer code back.
// Loaded this way, the constructor in entry.cpp starts nothing: only a request does.
#include "agent/agent.h"
#include "agent/entry/attach_reply.h"
#include "agent/log.h"
#include "agent/recording/recorder.h"
#include "agent/threads/thread_state.h"
#include "protocol/attach_request.h"

namespace nmprof {
namespace {

// Whether a request of nmprof attach started the agent (rather than LD_PRELOAD).
bool g_started_by_attach = false;

bool recording() { return agent_recorder() && agent_recorder()->recording(); }

int answer(const AttachRequest& request) {
  switch (request.command) {
    case AttachCommand::Start:
      if (recording()) return kAttachAlreadyRecording;
      if (!start_agent(request.options, AgentMode::NativeAttach)) {
        stop_agent();
        return kAttachFailed;
      }
      g_started_by_attach = true;
      return kAttachOk;
    case AttachCommand::Status:
      return kAttachOk;
    case AttachCommand::Dump:
      if (!recording()) return kAttachNotRecording;
      agent_recorder()->flush();
      return kAttachOk;
    case AttachCommand::Stop:
      if (!recording()) return kAttachNotRecording;
      stop_agent();
      return kAttachOk;
  }
  return kAttachBadRequest;
}

}  // namespace
}  // namespace nmprof

extern "C" __attribute__((visibility("default"))) int nmprof_attach_request(const char* text) {
  using namespace nmprof;
  AgentGuard guard;
  AttachRequest request;
  if (auto error = parse_attach_request(text ? text : "", request)) {
    write_reply(request.options, {{"result", "error"}, {"message", *error}});
    return kAttachBadRequest;
  }
  // A recording this process started with (nmprof run, LD_PRELOAD) is not nmprof
  // attach's to look into or end: it is written where that run asked.
  if (agent_recorder() && !g_started_by_attach) {
    AttachReply reply = status_reply();
    reply["result"] = "error";
    reply["message"] = "nmprof is in this process since it started (nmprof run or LD_PRELOAD) and records into " +
                       reply["file"] + "; that recording is written when the process ends";
    write_reply(request.options, reply);
    return kAttachFailed;
  }
  int code = answer(request);
  AttachReply reply = status_reply();
  if (code == kAttachFailed) reply["message"] = "the agent could not start (see the process's stderr)";
  if (code != kAttachOk) reply["result"] = "error";
  write_reply(request.options, reply);
  return code;
}
