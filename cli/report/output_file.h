// A report or converted profile written to a file: into a temporary file beside it
// (created first, so an unwritable place fails before any work), renamed over the
// target only when complete, so a failure never leaves a truncated output. An
// existing device or pipe (/dev/stdout) is written in place, never replaced.
#pragma once

#include <fstream>
#include <string>

namespace nmprof::report {

class OutputFile {
 public:
  // Throws std::system_error naming `path` when the temporary file cannot be created.
  explicit OutputFile(std::string path);
  ~OutputFile();  // removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return stream_; }
  // Flushes and renames into place; throws std::system_error.
  void commit();

 private:
  std::string path_;
  std::string target_;     // path_, or the file its symbolic link points to
  std::string temporary_;  // empty when writing in place
  std::ofstream stream_;
  bool committed_ = false;
};

}  // namespace nmprof::report
