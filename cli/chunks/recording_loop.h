// `run --loop PERIOD` and `attach --loop PERIOD`: while the command (or the target)
// runs, a thread of nmprof closes a chunk every PERIOD and the next one begins; the agent records on, unaware (its sampling state
// carries over by itself). Each chunk is a recording of its own, cut from the
// processes' recordings (recording_windows.h), written through the output writer to
// -o with %n (its number) and %t (its start) expanded, converted to -o's format, and
// handed to the uploader. When the command ends (the attach stops), the last chunk is cut.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/chunks/recording_windows.h"
#include "cli/upload/uploader.h"

namespace nmprof::cli {

struct LoopSettings {
  double period_seconds = 0;
  std::string output;  // -o, with %n and/or %t
  unsigned keep = 0;   // the newest chunk files kept; 0: all
  uint64_t most_bytes = 0;  // --max-size: a chunk's recording at most; 0: no limit
  bool keep_jfr = false;
  bool quiet = false;
  size_t top = 10;
  std::optional<uint64_t> fail_on_live;  // of the last chunk: the live set at the end
  double confidence = 0;
  std::string program;  // for the uploads' --app default
  const char* live_at_end = "live at exit";  // the last chunk's summary: an attach's target may run on
};

class RecordingLoop {
 public:
  RecordingLoop(LoopSettings settings, RecordingFiles& files, int64_t started_nanos,
                upload::Uploader* uploader);
  ~RecordingLoop();  // pause()

  // The command's pid, for %p, once it runs.
  void command_started(long pid) { pid_ = pid; }
  // Starts cutting a chunk every period.
  void start();
  // Stops the thread: no chunk is cut until finish(), and the files may be looked at
  // meanwhile (an attach stops the target's children first).
  void pause();
  // The command has ended at `ended_nanos`: cuts the chunks whose end has passed and
  // the last one. Returns nmprof's exit status for the chunks: 0; kExitFailure when
  // one could not be written (the processes' recordings are then kept, not to be
  // removed), or the last chunk's --fail-on-live verdict.
  int finish(int64_t ended_nanos);
  // Whether every chunk was written (the recordings may be removed).
  bool all_written() const { return !failed_; }

 private:
  void run();
  // Cuts the window that ends at end_nanos and writes it as the next chunk; returns the
  // delivery's status.
  int write_chunk(int64_t end_nanos, bool last);
  // Removes the oldest chunk files beyond --keep.
  void keep_newest();

  LoopSettings settings_;
  RecordingWindows windows_;
  upload::Uploader* uploader_;
  std::atomic<long> pid_{0};
  // How long after a window's end it is cut: the agent writes what it sampled each
  // second (a JVM's every 100 ms); a sample written later goes in the next chunk.
  static constexpr int64_t kWriteDelayNanos = 1'500'000'000;
  const int64_t period_nanos_;
  int64_t window_start_;
  int64_t next_boundary_;  // the end of the window to cut next
  unsigned number_ = 0;
  bool failed_ = false;
  std::deque<std::vector<std::string>> written_;  // each chunk's files, oldest first

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

// Now on the wall clock, ns since the Unix epoch.
int64_t wall_clock_nanos();

}  // namespace nmprof::cli
