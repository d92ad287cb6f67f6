// Where the recordings of a looping session are read from while their processes
// write them (recording_windows.h): run's staging directory, or the files an attach's
// agent writes in the target's /tmp (attach_recordings.h). One file per process.
#pragma once

#include <fcntl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/output/staging_directory.h"

namespace nmprof::cli {

class RecordingFiles {
 public:
  virtual ~RecordingFiles() = default;
  // The names of the recordings there now.
  virtual std::vector<std::string> names() = 0;
  // Opens one for reading: a descriptor of the caller's, or a negative safe_file error.
  virtual int open_file(const std::string& name) const = 0;
  // The same, for writing too: what the chunks hold is punched out of it.
  virtual int open_writable(const std::string& name) const = 0;
  // Its size now; nullopt when it is gone.
  virtual std::optional<uint64_t> size_of(const std::string& name) const = 0;
  // Its process has ended and chunks written hold all of it: it goes (a run of many
  // short processes would otherwise hold them all on disk until it ends). Whether it
  // is gone (an attach's target keeps its own file to the end).
  virtual bool release(const std::string& name) = 0;
};

// run's: the .jfr files of its staging directory.
class StagedRecordings final : public RecordingFiles {
 public:
  explicit StagedRecordings(const StagingDirectory& staging) : staging_(staging) {}
  std::vector<std::string> names() override { return staging_.names(".jfr"); }
  int open_file(const std::string& name) const override { return staging_.open_file(name); }
  int open_writable(const std::string& name) const override { return staging_.open_file(name, O_RDWR); }
  std::optional<uint64_t> size_of(const std::string& name) const override;
  bool release(const std::string& name) override { return staging_.remove_file(name); }

 private:
  const StagingDirectory& staging_;
};

}  // namespace nmprof::cli
