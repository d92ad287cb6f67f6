// The agent's side of an attach request's reply (attach_request.h), shared by the
// JVM attach and the ptrace attach to native processes.
#pragma once

#include "protocol/attach_request.h"

namespace nmprof {

// The recording's state: result=ok, pid, recording, file, counts.
AttachReply status_reply();

// Writes `reply` with the request's token to the request's reply file. That file is
// one nmprof created (as this process's user) and reads back through the
// descriptor it keeps: it is only written if it is still that regular file of
// ours.
void write_reply(const AgentOptions& request, AttachReply reply);

}  // namespace nmprof
