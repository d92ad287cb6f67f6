// A file nmprof is still writing beside the user's output (output_writer.h) is
// removed when a signal ends nmprof meanwhile: Ctrl-C during `report big.jfr -o
// big.html` left .nmprof-*.partial behind. While one is registered, each signal that
// ends a process (signals.h: kStoppingSignals) and is at its default action gets a
// handler that removes the registered files and lets the signal end nmprof as
// before. Where nmprof catches them already (run holds them until the profile is
// written, attach's one shot stops its recording), nothing changes.
#pragma once

namespace nmprof::cli {

class RemovedIfInterrupted {
 public:
  // `name` in the directory `dir` (a descriptor), both kept open and unchanged by
  // the caller while this lives. Up to four at a time; more are not removed.
  RemovedIfInterrupted(int dir, const char* name);
  ~RemovedIfInterrupted();  // the file is the caller's again
  RemovedIfInterrupted(const RemovedIfInterrupted&) = delete;
  RemovedIfInterrupted& operator=(const RemovedIfInterrupted&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace nmprof::cli
