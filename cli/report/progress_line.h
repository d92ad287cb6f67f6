// How far reading a recording has come, redrawn in place on stderr while a large
// file is read ("nmprof report: reading app.jfr 45%"), and erased when done. Only
// on a terminal: a pipe or a log gets nothing.
#pragma once

#include <ostream>
#include <string>

#include "profile/jfr_profile.h"

namespace nmprof::report {

class ProgressLine {
 public:
  // Shown only when `enabled` and stderr is a terminal.
  ProgressLine(std::ostream& err, std::string file, bool enabled);
  ~ProgressLine();  // erases the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // For read_profile; empty when nothing is shown.
  profile::ReadProgress callback();

 private:
  void show(double share);

  std::ostream& err_;
  std::string file_;
  bool shown_;
  int last_percent_ = -1;
};

}  // namespace nmprof::report
