// Joins the per-process recordings of one run into the user's output file. JFR
// chunks are self-contained and nmprof's pool keys carry the pid, so joining is
// concatenation of each file's complete chunks, oldest process first. A chunk cut
// short (a process killed while writing) is dropped with a warning; everything
// before it is kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nmprof::cli {

// The length of the prefix of `bytes` made of whole chunks: what a reader can take
// from a recording that may be in the middle of an append.
size_t complete_chunks(std::span<const uint8_t> bytes);
// The same for a file, reading only the chunk headers (a recording may be large).
size_t complete_chunks(int fd);

struct MergeResult {
  size_t files = 0;                   // per-process recordings that had data
  std::vector<std::string> warnings;  // one line each
};

// Writes the merged file to `output` (output_writer.h: whole, or not at all), and
// deletes the inputs and `directory` when that succeeded. Returns false with *error
// otherwise, leaving the inputs where they are.
bool merge_recordings(const std::string& directory, const std::string& output, MergeResult* result,
                      std::string* error);

}  // namespace nmprof::cli
