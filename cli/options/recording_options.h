// The options that shape a recording, the same for `run` and `attach` (start and one
// shot): sampling interval, stack depth, live tracking and its cap, the file's size
// limit, static tags and the names of the context attributes. They become the
// agent's AgentOptions, so both commands name, check and pass them alike.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "protocol/agent_options.h"

namespace nmprof::cli {

struct RecordingOptions {
  std::string interval = "512k";
  uint64_t rate = 0;         // samples per second (--rate); 0: fixed interval
  unsigned stack_depth = 0;  // 0: the agent's default
  bool no_live = false;
  uint64_t max_tracked = 0;  // 0: the agent's default
  std::string max_size = "0";  // the file stops growing at it (k/m/g); 0: no limit
  std::vector<std::string> tags;   // KEY=VALUE each
  std::optional<std::string> context_attributes;  // NAME,NAME
};

void add_recording_options(CLI::App* command, RecordingOptions& options);

// Fills the recording part of `agent`; on a bad value, returns false with *error set.
bool to_agent_options(const RecordingOptions& options, AgentOptions* agent, std::string* error);

}  // namespace nmprof::cli
