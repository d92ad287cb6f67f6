// The CI gate: `--fail-on-live SIZE` fails a report (or `nmprof run`) whose recording
// ends with more than SIZE live; `--fail-on-growth SIZE` fails a diff whose live bytes
// (allocated bytes without live data) grew by more than SIZE. The estimates are
// sampled, so each gate decides at a confidence (docs/reports.md#a-ci-gate): it fails
// when the estimate's interval lies above SIZE, passes when the interval a recording
// of SIZE would have had lies above the estimate, and otherwise says it cannot decide,
// with the --nativemem that would.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cli/report/model/diff_report.h"
#include "cli/report/model/sampling_error.h"
#include "profile/profile.h"

namespace nmprof::report {

struct Gate {
  std::optional<uint64_t> max_live;    // --fail-on-live
  std::optional<uint64_t> max_growth;  // --fail-on-growth, with --diff
  double confidence = kDefaultConfidence;  // --confidence
};

struct Verdict {
  enum class Outcome { Pass, Fail, Undecided };
  Outcome outcome = Outcome::Pass;
  std::string reason;  // one line: why it failed, or why it cannot decide; "" for a pass
};

// Throws ReportError when the recording has no live data to judge.
Verdict live_gate(const profile::Profile& profile, uint64_t max_live, double confidence);
// `now`: the new recording, whose interval bounds the variance when it has no samples.
Verdict growth_gate(const Diff& diff, const profile::Profile& now, uint64_t max_growth, double confidence);

// "failed: <reason>", or "undecided: <reason>": the line a verdict prints.
std::string verdict_text(const Verdict& verdict);

// The gate's exit status: 0, cli::kExitGate or cli::kExitUndecided.
int gate_exit_status(const Verdict& verdict);

}  // namespace nmprof::report
