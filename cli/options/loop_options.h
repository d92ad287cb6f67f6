// --loop DURATION and --keep N, the same for `run` and a one-shot `attach`: a chunk
// file every DURATION (recording_loop.h), the newest N kept.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "protocol/agent_options.h"

namespace nmprof::cli {

struct LoopOptions {
  double seconds = 0;  // --loop: a chunk every so many seconds; 0: one recording
  unsigned keep = 0;   // --keep: the newest chunk files kept; 0: all
};

void add_loop_options(CLI::App* command, LoopOptions& options);

// The refusals of --loop and --keep that their values alone cannot tell, given -o; ""
// when none.
std::string loop_problem(const LoopOptions& options, const std::string& output);

// Under --loop, --max-size bounds each chunk, not the agent's file (which grows on
// while what the chunks hold is punched out of it): the limit is taken from the
// agent's options and returned (0: none).
uint64_t chunk_size_limit(const LoopOptions& options, AgentOptions& agent);

}  // namespace nmprof::cli
