#include "cli/report/progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

namespace nmprof::report {

ProgressLine::ProgressLine(std::ostream& err, std::string file, bool enabled)
    : err_(err), file_(std::move(file)), shown_(enabled && isatty(STDERR_FILENO)) {}

ProgressLine::~ProgressLine() {
  if (last_percent_ >= 0) err_ << "\r\033[K" << std::flush;
}

profile::ReadProgress ProgressLine::callback() {
  if (!shown_) return {};
  return [this](double share) { show(share); };
}

void ProgressLine::show(double share) {
  int percent = static_cast<int>(std::clamp(share, 0.0, 1.0) * 100);
  if (percent == last_percent_) return;
  last_percent_ = percent;
  err_ << "\rnmprof report: reading " << file_ << " " << percent << "%" << std::flush;
}

}  // namespace nmprof::report
