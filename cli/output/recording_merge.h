// Joins the per-process recordings of one run into the user's output file. JFR
// chunks are self-contained and nmprof's pool keys carry the pid, so joining is
// concatenation of each file's complete chunks, oldest process first. A chunk cut
// short (a process killed while writing) is dropped with a warning; everything
// before it is kept. Every process leaves a recording, with or without samples: those
// without are left out, unless none has any (then the oldest process's is kept, so
// that the output is a readable recording that says nothing was sampled), or they
// end by exec'ing a program that left no recording (the report names them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cli/output/recording_broker.h"
#include "cli/output/staging_directory.h"
#include "cli/run/surviving_processes.h"

namespace nmprof::cli {

// The length of the prefix of `bytes` made of whole chunks: what a reader can take
// from a recording that may be in the middle of an append.
size_t complete_chunks(std::span<const uint8_t> bytes);
// The same for a file, reading only the chunk headers (a recording may be large).
size_t complete_chunks(int fd);

// Whether the process of a recording still lives: the agent holds an exclusive flock
// on its file while it does (a process that outlived the command, a daemon, is
// recorded only up to now).
bool still_recording(int fd);

// Whether whole chunks hold a sampled allocation (profiler.Malloc).
bool holds_samples(std::span<const uint8_t> chunks);
// The stoppedGrowing of the last nmprof.Statistics of whole chunks (kGrowing: none).
uint64_t last_stop_reason(std::span<const uint8_t> chunks);

struct MergeResult {
  bool written = false;               // the output was written (with or without samples)
  std::vector<std::string> warnings;  // one line each
  bool programs_unrecorded = false;   // a warning names a program exec'd that left no recording
};

// Writes the merged recordings of `directory` to `output` (output_writer.h: whole,
// or not at all), and deletes the inputs and `directory` when that succeeded. Returns
// false with *error otherwise, leaving the inputs where they are. Only regular files
// of ours are read (staging_directory.h); anything else there is named in a warning.
// `survivors`: the run's processes still alive (surviving_processes.h), named in a
// warning each. `execs`: the programs vfork() children exec'd; those that left no
// recording are named in a warning per program.
bool merge_recordings(StagingDirectory& directory, const std::vector<SurvivingProcess>& survivors,
                      const std::vector<ExecFromVforkChild>& execs, const std::string& output, MergeResult* result,
                      std::string* error);

}  // namespace nmprof::cli
