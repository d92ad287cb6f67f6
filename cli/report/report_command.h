// `nmprof report FILE [--format text|json|pprof|collapsed] [-o OUT] [--diff BASE] ...`,
// and what `nmprof run` and `attach` do with a recording once it is complete: convert
// it to the format their -o names, and print the summary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "cli/report/model/report.h"
#include "profile/profile.h"

namespace nmprof::report {

// Reads options.files and writes the report to options.output, or to out; problems go
// to err as one line each. Returns the exit status: 0, or 1 on failure.
int run_report(const ReportOptions& options, std::ostream& out, std::ostream& err);

// Where run and attach put the JFR recording for an output file: the output itself
// when it is JFR (or of no known format); else "<name>.jfr" beside it when the JFR is
// to be kept, a hidden temporary name when not.
std::string recording_path(const std::string& output, bool keep_jfr);

struct Delivery {
  std::string recording;  // from recording_path
  std::string output;
  bool keep_jfr = false;
  size_t top = 10;     // stacks in the summary
  bool quiet = false;  // no summary, only where the output is
  std::optional<uint64_t> fail_on_live;  // run's --fail-on-live
  std::string live_label = "live at exit";  // attach: "live at end", the process runs on
  // Programs of the run left no recording, and a warning named them: a recording
  // without samples does not blame the sampling interval then.
  bool programs_unrecorded = false;
  double confidence = kDefaultConfidence;  // run's --confidence, for the gate and the summary's intervals
};

// Converts the recording to the output's format (removing the recording unless it is
// kept) and prints the summary to out. A recording that cannot be converted is kept,
// and out says where. Returns the exit status: 0; kExitFailure when the conversion
// failed; kExitGate when more than fail_on_live bytes were live at the end, and
// kExitUndecided when the samples cannot tell (the reason is printed on out).
int deliver_recording(const Delivery& delivery, std::ostream& out);

// Where the profile is (`file`), its totals, the top stacks (live ones when anything
// is live at the end) and the command that shows more of `recording` (unless empty).
void print_run_summary(const profile::Profile& profile, const std::string& file, const std::string& recording,
                       size_t top, std::ostream& out, const std::string& live_label = "live at exit",
                       bool programs_unrecorded = false, double confidence = kDefaultConfidence);

}  // namespace nmprof::report
