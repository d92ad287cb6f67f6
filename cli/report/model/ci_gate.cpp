#include "cli/report/model/ci_gate.h"

#include <algorithm>
#include <cmath>

#include "cli/exit_codes.h"
#include "cli/report/model/heap_view.h"
#include "cli/report/model/report.h"
#include "cli/report/units.h"

namespace nmprof::report {
namespace {

// What a gate weighs: an estimate against a limit, the estimate's variance, and the
// variance a recording whose truth is the limit would have had.
struct Weighed {
  double estimate = 0;
  double variance = 0;
  double variance_at_limit = 0;
};

// "--nativemem 64k": an interval whose margins would be narrow enough to decide, at a
// distance `distance` from the limit over `bytes` bytes. A byte's variance is at most
// the interval it was sampled at (docs/sampling.md), so z * sqrt(interval * bytes)
// below the distance suffices; the interval is rounded down to a power of two.
std::string deciding_interval(double distance, double bytes, double z) {
  constexpr double kSmallest = 1024;  // below this, recording everything costs little more
  double interval = bytes > 0 ? distance * distance / (z * z * bytes) : 0;
  if (!(interval >= kSmallest)) return "--nativemem 0";
  double kib = std::exp2(std::floor(std::log2(interval / 1024)));
  char text[48];
  if (kib >= 1024)
    snprintf(text, sizeof text, "--nativemem %.0fm", kib / 1024);
  else
    snprintf(text, sizeof text, "--nativemem %.0fk", kib);
  return text;
}

// `what`: "live at the end", the estimate's name; `option`: the gate's, with its limit.
Verdict decide(const Weighed& w, double limit, double confidence, const std::string& what,
               const std::string& option) {
  double z = interval_z(confidence);
  double margin = z * standard_error(w.variance), margin_at_limit = z * standard_error(w.variance_at_limit);
  std::string estimate = what + " ~" + format_bytes(w.estimate) +
                         (margin > 0 ? " \u00b1 " + format_bytes(margin) : std::string());
  std::string limit_text = option + " " + format_bytes(limit);
  if (w.estimate - margin > limit)
    return {Verdict::Outcome::Fail, estimate + " exceeds " + limit_text + " at " + confidence_text(confidence)};
  if (w.estimate <= limit - margin_at_limit) return {};
  return {Verdict::Outcome::Undecided,
          "cannot decide " + limit_text + " at " + confidence_text(confidence) + ": " + estimate +
              " (too few samples); a recording with " +
              deciding_interval(std::abs(w.estimate - limit), std::max(w.estimate, limit), z) + " would"};
}

// The variance of one byte of `t`: what its samples say, or when it has none the
// bound the largest interval of `profile` gives.
double variance_per_byte(const Totals& t, const profile::Profile& profile) {
  if (t.samples > 0 && t.bytes > 0) return t.bytes_variance / t.bytes;
  return static_cast<double>(largest_interval(profile));
}

}  // namespace

Verdict live_gate(const profile::Profile& profile, uint64_t max_live, double confidence) {
  check_live_view(profile);
  const Totals live = heap_view(profile).live;
  double limit = static_cast<double>(max_live);
  Weighed w{live.bytes, live.bytes_variance, variance_per_byte(live, profile) * limit};
  return decide(w, limit, confidence, "live at the end", "--fail-on-live");
}

Verdict growth_gate(const Diff& diff, const profile::Profile& now, uint64_t max_growth, double confidence) {
  const Totals& before = diff.totals.view(diff.has_live, false);
  const Totals& after = diff.totals.view(diff.has_live, true);
  double limit = static_cast<double>(max_growth);
  // A new recording that grew by exactly the limit would hold the base's bytes and the limit.
  double at_limit = before.bytes_variance + variance_per_byte(after, now) * std::max(0.0, before.bytes + limit);
  Weighed w{after.bytes - before.bytes, before.bytes_variance + after.bytes_variance, at_limit};
  return decide(w, limit, confidence,
                std::string(diff.has_live ? "live" : "allocated") + " bytes since " + diff.base_file + " grew by",
                "--fail-on-growth");
}

std::string verdict_text(const Verdict& verdict) {
  return (verdict.outcome == Verdict::Outcome::Undecided ? "undecided: " : "failed: ") + verdict.reason;
}

int gate_exit_status(const Verdict& verdict) {
  switch (verdict.outcome) {
    case Verdict::Outcome::Pass: return 0;
    case Verdict::Outcome::Fail: return cli::kExitGate;
    case Verdict::Outcome::Undecided: return cli::kExitUndecided;
  }
  return 0;
}

}  // namespace nmprof::report
