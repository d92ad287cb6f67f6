#include "agent/entry/attach_reply.h"

#include <fcntl.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/log.h"
#include "agent/recording/recorder.h"
#include "agent/safety/own_descriptors.h"
#include "common/safe_file.h"

namespace nmprof {

void write_reply(const AgentOptions& request, AttachReply reply) {
  if (request.reply.empty()) return;
  reply["token"] = request.token;
  std::string text = format_attach_reply(reply);
  const char* name;
  int dir = safe_file::open_parent(request.reply.c_str(), &name);
  if (dir < 0) return log_line("cannot answer nmprof at %s: %s", request.reply.c_str(), safe_file::error_text(dir));
  int fd = safe_file::open_owned(dir, name, O_WRONLY | O_TRUNC, geteuid());
  own_descriptors::close_held(dir);
  if (fd < 0) return log_line("cannot answer nmprof at %s: %s", request.reply.c_str(), safe_file::error_text(fd));
  ssize_t written = write(fd, text.data(), text.size());
  (void)written;
  own_descriptors::close_held(fd);
}

AttachReply status_reply() {
  AttachReply reply{{"result", "ok"}, {"pid", std::to_string(getpid())}};
  if (Recorder* recorder = agent_recorder()) {
    Recorder::Status s = recorder->status();
    reply["recording"] = s.recording ? "true" : "false";
    if (s.ended_early) reply["ended_early"] = s.ended_early;  // why the file took nothing more
    reply["file"] = s.file;
    reply["samples"] = std::to_string(s.samples);
    reply["lost_samples"] = std::to_string(s.lost_samples);
    reply["tracked_blocks"] = std::to_string(s.tracked_blocks);
    reply["live_bytes"] = std::to_string(s.live_bytes);
  } else {
    reply["recording"] = "false";
  }
  return reply;
}

}  // namespace nmprof
