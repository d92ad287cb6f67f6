// nmprof run [options] -- COMMAND [ARGS...]: runs the command with the agent
// preloaded, merges what every process recorded into one file, prints the summary,
// and exits with the command's exit status.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/options/loop_options.h"
#include "cli/options/recording_options.h"
#include "cli/options/upload_options.h"
#include "cli/report/model/sampling_error.h"

namespace nmprof::cli {

struct RunOptions {
  RecordingOptions recording;
  std::string output = "nmprof-%p.jfr";
  size_t top = 10;
  bool quiet = false;
  bool keep_jfr = false;  // when -o names another format
  bool exit_watch = false;  // AgentOptions::exit_watch
  bool trust_environment = false;  // NMPROF_AGENT under sudo (agent_location.h)
  std::optional<uint64_t> fail_on_live;  // exit kExitGate when more was live at the end
  double confidence = report::kDefaultConfidence;  // of the gate and the summary's intervals
  LoopOptions loop;
  UploadOptions upload;
  std::vector<std::string> command;
};

// The command line of `run` is split before CLI11 sees it: options up to the first
// argument that is not one (or up to "--"), then the command, whose own options
// must not be taken for nmprof's. Returns the index in args where the command
// starts, or sets *error for an option `run` does not know. `run` is the subcommand
// that add_run_command made: its options say which take a value.
size_t split_run_arguments(const CLI::App& run, const std::vector<std::string>& args, size_t first,
                           std::string* error);
void add_run_command(CLI::App& app, RunOptions& options);
int run_command(const RunOptions& options);

}  // namespace nmprof::cli
