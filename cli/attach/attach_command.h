// nmprof attach PID [start|status|dump|stop] [options]: profiles a running process
// (a HotSpot JVM through its attach API, any other through ptrace). Without an
// action, one shot: start, wait for --duration (or Ctrl-C, or the process's exit),
// stop, collect, summarize; with --loop, a chunk file every period meanwhile. With an
// action, a long session in steps.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "cli/options/loop_options.h"
#include "cli/options/recording_options.h"
#include "cli/options/upload_options.h"

namespace nmprof::cli {

struct AttachOptions {
  int pid = 0;
  std::string action;  // "", start, status, dump, stop
  RecordingOptions recording;  // start and one shot
  double duration = 0;  // seconds; 0 = until Ctrl-C or the process exits
  std::string output;   // default nmprof-<pid>.jfr
  LoopOptions loop;     // one shot only
  size_t top = 10;
  bool quiet = false;
  bool keep_jfr = false;  // when -o names another format
  bool trust_environment = false;  // NMPROF_AGENT under sudo (agent_location.h)
  double timeout = 10;  // seconds the target gets to answer
  bool force = false;   // attach through ptrace to a process under seccomp all the same
  UploadOptions upload;  // one shot and stop
};

void add_attach_command(CLI::App& app, AttachOptions& options);
int attach_command(const AttachOptions& options);

}  // namespace nmprof::cli
