#include "attach/hotspot_vm.h"

#include <cerrno>
#include <cstring>

#include "attach/as_target.h"
#include "attach/attach_listener.h"
#include "attach/fd_io.h"
#include "attach/vm_detection.h"

namespace nmprof::attach {
namespace {

// A JVM's longest answers (VM.flags -all, a thread dump of a big JVM) stay well below.
constexpr size_t kMaxReplyBytes = 16 << 20;

std::string jvm_label(const TargetProcess& target) {
  return "JVM " + std::to_string(target.pid);
}

// The JVM's text for an error message, or a note that it gave none.
std::string jvm_reason(const Reply& reply, std::string_view text) {
  std::string reason = one_line(text);
  return reason.empty() ? "no reason given (reply code " + std::to_string(reply.code) + ")" : reason;
}

}  // namespace

Result<HotSpotVm> HotSpotVm::find(pid_t pid, AttachTimeouts timeouts) {
  auto target = inspect_process(pid);
  if (!target) return target.error();
  if (auto allowed = check_attach_permission(*target); !allowed) return allowed.error();
  if (auto attachable = check_attachable_hotspot(*target); !attachable) return attachable.error();
  return HotSpotVm(std::move(*target), timeouts);
}

Result<Reply> HotSpotVm::request(std::string_view command, const Arguments& args) const {
  auto bytes = encode_request(command, args);
  if (!bytes) return bytes.error();
  std::string what = command == "jcmd" ? "'jcmd " + std::string(args[0]) + "'" : "'" + std::string(command) + "'";

  auto connection = run_as_target(
      target_, [this](const TargetDirs& dirs) { return connect_to_attach_listener(target_, dirs, timeouts_.listener); },
      timeouts_.listener + std::chrono::seconds(5),
      [this](const TargetDirs& dirs) { return remove_trigger_files(target_, dirs); });
  if (!connection) return connection.error();
  if (!send_all(connection->get(), *bytes)) {
    return Error{"cannot send the " + what + " request to " + jvm_label(target_) + ": " + std::strerror(errno)};
  }
  std::string raw;
  switch (read_until_eof(connection->get(), Clock::now() + timeouts_.reply, kMaxReplyBytes, raw)) {
    case ReadStatus::eof:
      break;
    case ReadStatus::too_long:
      return Error{jvm_label(target_) + " sent more than " + std::to_string(kMaxReplyBytes >> 20) +
                   " MiB in reply to the " + what + " request; is it really a JVM?"};
    case ReadStatus::timed_out:
      return Error{jvm_label(target_) + " did not answer the " + what + " request within " +
                   describe_duration(timeouts_.reply) +
                   "; its attach listener may be busy with another request (e.g. a heap dump), or the JVM is "
                   "stopped or hung; retry with a longer timeout"};
    case ReadStatus::failed:
      return Error{"cannot read the reply of " + jvm_label(target_) + ": " + std::strerror(errno)};
  }
  if (raw.empty()) {
    return Error{jvm_label(target_) + " closed the attach connection without answering the " + what +
                 " request (it rejected nmprof's credentials or the request)"};
  }
  auto reply = parse_reply(raw);
  if (!reply) {
    return Error{jvm_label(target_) + " sent an unreadable attach reply: '" + one_line(raw.substr(0, 80)) + "'"};
  }
  if (reply->code == 101) {
    return Error{jvm_label(target_) + " does not support version 1 of the attach protocol"};
  }
  return std::move(*reply);
}

Result<int> HotSpotVm::load_agent(std::string_view library, std::string_view options) const {
  if (library.empty() || library[0] != '/') {
    return Error{"the agent library path '" + std::string(library) +
                 "' must be absolute (as the target process sees it)"};
  }
  auto reply = request("load", {library, "true", options});
  if (!reply) return reply.error();
  LoadReply load = parse_load_reply(*reply);
  if (load.agent_code) return *load.agent_code;

  std::string reason = jvm_reason(*reply, load.reason);
  std::string jvm = jvm_label(target_);
  if (reason.find("Dynamic agent loading is not enabled") != std::string::npos) {
    return Error{jvm + " refuses to load agents: \"" + reason +
                 "\" Restart it with -XX:+EnableDynamicAgentLoading, or load the agent at startup with -agentpath:" +
                 std::string(library) + "=<options>"};
  }
  std::string hint;
  if (reason.find("was not loaded") != std::string::npos) {
    hint = "; the library must exist at that path inside the target's file system (its container, if any) and "
           "match its architecture and C library";
  }
  return Error{jvm + " could not load " + std::string(library) + ": " + reason + hint};
}

Result<std::string> HotSpotVm::jcmd(std::string_view command_line) const {
  auto reply = request("jcmd", {command_line, "", ""});
  if (!reply) return reply.error();
  if (reply->code != 0) {
    return Error{"jcmd '" + std::string(command_line) + "' failed in " + jvm_label(target_) + ": " +
                 jvm_reason(*reply, reply->text)};
  }
  return std::move(reply->text);
}

}  // namespace nmprof::attach
