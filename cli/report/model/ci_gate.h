// The CI gate: `--fail-on-live SIZE` fails a report (or `nmprof run`) whose recording
// ends with more than SIZE estimated bytes live; `--fail-on-growth SIZE` fails a diff
// whose live bytes (allocated bytes without live data) grew by more than SIZE.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cli/report/model/diff_report.h"
#include "profile/profile.h"

namespace nmprof::report {

struct Gate {
  std::optional<uint64_t> max_live;    // --fail-on-live
  std::optional<uint64_t> max_growth;  // --fail-on-growth, with --diff
};

// The one-line reason the recording fails the gate, or nothing when it passes. Throws
// ReportError when the recording has no live data to judge.
std::optional<std::string> live_gate_failure(const profile::Profile& profile, uint64_t max_live);
std::optional<std::string> growth_gate_failure(const Diff& diff, uint64_t max_growth);

}  // namespace nmprof::report
