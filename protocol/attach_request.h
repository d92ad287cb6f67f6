// What `nmprof attach` asks of the agent through the JVM's `load` command: a
// command word, then the agent's usual options, e.g.
//   start,nativemem=1m,reply=/tmp/nmprof-42.reply,file=/tmp/nmprof-42.jfr
//   status,reply=...   dump,reply=...   stop,reply=...
// The agent answers with Agent_OnAttach's return code and, at `reply`, a file of
// key=value lines (paths as the JVM sees them). Shared by the agent and the CLI.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/agent_options.h"

namespace nmprof {

// What a natively attached agent exports (agent/entry/native_attach.cpp), called as
// int nmprof_attach_request(const char* request) with format_attach_request's text.
constexpr char kNativeAttachEntryPoint[] = "nmprof_attach_request";

enum class AttachCommand { Start, Status, Dump, Stop };

struct AttachRequest {
  AttachCommand command = AttachCommand::Start;
  AgentOptions options;  // options.reply: where the answer goes
};

// Agent_OnAttach's return codes.
enum AttachResult : int {
  kAttachOk = 0,
  kAttachBadRequest = 1,     // the options did not parse (the reply says why)
  kAttachAlreadyRecording = 2,
  kAttachNotRecording = 3,
  kAttachFailed = 4,          // e.g. the output cannot be written (the reply says why)
};

const char* attach_command_name(AttachCommand command);
std::optional<std::string> parse_attach_request(std::string_view text, AttachRequest& request);
std::string format_attach_request(const AttachRequest& request);

// The reply file: one key=value per line (values without newlines). Parsed, control
// characters become '?'; the CLI bounds its size and checks its token.
using AttachReply = std::map<std::string, std::string>;
std::string format_attach_reply(const AttachReply& reply);
AttachReply parse_attach_reply(std::string_view text);
// A count in a reply ("samples=12"), when `key` is there and is one.
std::optional<uint64_t> reply_count(const AttachReply& reply, const std::string& key);

}  // namespace nmprof
