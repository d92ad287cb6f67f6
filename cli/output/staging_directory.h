// The private directory `run` gives its command's processes for their recordings
// (agent file=<dir>/%p.jfr), beside the output so that the final copy is a rename's
// distance away, or in /tmp under sudo or when someone else could rename it. The
// directory is opened once, right after it is made, checked (ours, 0700), and from
// then on reached only through that descriptor. Its files are opened relative to it
// without following links or blocking on FIFOs, and taken only when they are regular
// files of ours with one link.
#pragma once

#include <fcntl.h>

#include <string>
#include <vector>

namespace nmprof::cli {

// The canonical `directory` when no one but us and root may rename a directory on its
// path, else "/tmp" (sticky). The command's processes open their recordings by path:
// a link put in place of the staging directory would take root's files wherever it
// points.
std::string staging_parent(const std::string& directory);

class StagingDirectory {
 public:
  StagingDirectory() = default;
  ~StagingDirectory();  // closes the descriptor; the directory stays unless removed
  StagingDirectory(const StagingDirectory&) = delete;
  StagingDirectory& operator=(const StagingDirectory&) = delete;

  // Makes a new directory ".nmprof-XXXXXX" in `parent`; false with a one-line *error.
  bool create(const std::string& parent, std::string* error);

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }

  // The names of the entries ending in `suffix`.
  std::vector<std::string> names(const std::string& suffix) const;
  // Opens the entry `name` for reading (or as `access` says): a regular file of ours
  // with a single link, or a negative safe_file error.
  int open_file(const std::string& name, int access = O_RDONLY) const;
  // Deletes the entry `name`; whether it is gone.
  bool remove_file(const std::string& name) const;
  // Deletes the entries and the directory.
  void remove();

 private:
  std::string path_;
  int parent_ = -1;
  int fd_ = -1;
};

}  // namespace nmprof::cli
