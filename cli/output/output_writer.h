// Every file nmprof writes for the user goes through here: -o of report, run and
// attach in every format (JFR, pprof, HTML, JSON, text, collapsed), and the JFR kept
// beside a converted output. A file is written whole or not at all: into a new file
// of an unpredictable name in the same directory (never through anything planted
// there), then renamed over the output in one step. Runs in parallel with the same -o
// all succeed, and the last to finish leaves its complete file.
//
// - Only a regular file at the output's name is replaced. A symbolic link, device,
//   FIFO, socket or directory there is refused and never opened, not even by root
//   (`-o /dev/stdout` as root must not write into whatever fd 1 is, nor replace the
//   link); report's `-o -` is standard output, already open.
// - Outputs are 0600, as the agent's recordings: they hold command lines, paths and
//   context values of the profiled program.
// - Under sudo the file is created and renamed with the invoking user's rights, and so
//   belongs to that user (invoking_user.h).
// - A signal that ends nmprof meanwhile removes the file being written
//   (removed_if_interrupted.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <ostream>
#include <string>

#include "cli/output/removed_if_interrupted.h"

namespace nmprof::cli {

class OutputFile {
 public:
  explicit OutputFile(std::string output);
  ~OutputFile();  // removes the staging file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Creates the staging file beside the output: false with a one-line *error, and
  // nothing is left behind. Done before the work, so that an unwritable place fails
  // first.
  bool open(std::string* error);
  // The staging file: write it through fd() or stream(), not both.
  int fd() const { return fd_; }
  std::ostream& stream();
  // Flushes, syncs and renames the staging file over the output; false with a
  // one-line *error, the output then left as it was.
  bool commit(std::string* error);

 private:
  std::string output_;
  const char* name_ = nullptr;  // the output's last component, in output_
  int dir_ = -1;
  int fd_ = -1;
  char staging_[64] = "";
  std::optional<RemovedIfInterrupted> removed_if_interrupted_;  // while staging_ is there
  std::unique_ptr<std::ostream> stream_;
};

// Why `name` in `dir` is not to be replaced by an output, or nullptr when it may be
// (absent, or a regular file): "is a symbolic link; ...".
const char* refusal_to_replace(int dir, const char* name);

// Writes the contents into `fd`; false with *error on failure.
using OutputFiller = std::function<bool(int fd, std::string* error)>;

// An OutputFile opened, filled and committed. False with a one-line *error; the
// output is then left as it was.
bool write_output(const std::string& output, std::string* error, const OutputFiller& fill);

// Writes `bytes` to `fd`, the staging file of `output`; false with *error ("cannot
// write OUTPUT: ...") on failure.
bool write_bytes(int fd, std::span<const uint8_t> bytes, const std::string& output, std::string* error);

// Copies the first `length` bytes of `source` to `out`.
bool copy_file(int source, size_t length, int out, std::string* error);

}  // namespace nmprof::cli
