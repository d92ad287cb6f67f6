// The recordings of a looping session (--loop), cut into windows: what every process
// of the run or attach recorded (one growing file each, recording_files.h, a chunk per
// process image) becomes, at each boundary, one JFR recording of the window: the
// concatenated window chunks (chunk_window.h) of the process images that recorded
// something in it or still run. The files are read incrementally, from where the
// last cut left them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cli/chunks/chunk_window.h"
#include "cli/chunks/recording_files.h"

namespace nmprof::cli {

class RecordingWindows {
 public:
  explicit RecordingWindows(RecordingFiles& files) : files_(files) {}
  ~RecordingWindows();  // closes the recordings
  RecordingWindows(const RecordingWindows&) = delete;
  RecordingWindows& operator=(const RecordingWindows&) = delete;

  // The recording of [start_nanos, end_nanos) (wall clock): the samples made before
  // end_nanos; empty when no process has recorded anything yet. `last`: the command
  // has ended, and this one takes every sample left. The live view is that of the
  // process images that ran in the window (one that ended before has no block live
  // then). The recording is at most `most_bytes` long (0: no limit; ChunkWindow::cut
  // says what is left out). A recording that cannot be read (damaged) is named in one
  // line of *warnings and left out from then on.
  std::vector<uint8_t> cut(int64_t start_nanos, int64_t end_nanos, bool last, uint64_t most_bytes,
                           std::vector<std::string>* warnings);
  // The windows cut so far are written: the recordings of processes that have ended,
  // all of whose records they hold, are released (RecordingFiles::release), and the
  // others give back the disk space of what the windows took in (punched_records.h).
  // A file system that cannot is named once in *warnings.
  void let_go_written(std::vector<std::string>* warnings);

 private:
  struct Recording {
    // Open only while its process runs: a run that starts thousands of processes must
    // not hold a descriptor for each. Opened when it grows past what was read (a new
    // one; an agent that could not lock it looks ended).
    int fd = -1;
    uint64_t read_to = 0;  // the end of its last complete chunk read
    // Its last image ran on past the last window's end: the next window has its end (and,
    // closed, what it wrote after that end) though nothing may come in it.
    bool ran_past_last_cut = false;
    bool released = false;
    std::vector<ChunkWindow> images;  // one per chunk of the file, in file order
    std::vector<uint64_t> image_starts;  // where their chunks begin in the file
    bool damaged = false;
  };
  // Takes what the agent appended since the last cut.
  void read_new(Recording& recording);
  // Whether the file grew past what was read of it (false when it is gone).
  bool grew_since_read(const std::string& name, const Recording& recording) const;

  RecordingFiles& files_;
  std::map<std::string, Recording> recordings_;  // by file name
  std::vector<std::string> finished_;  // ended, and all in the windows cut: released once written
  bool punching_ = true;  // until the file system says it cannot
};

}  // namespace nmprof::cli
