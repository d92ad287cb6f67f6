#include "cli/report/model/ci_gate.h"

#include "cli/report/model/heap_view.h"
#include "cli/report/model/report.h"
#include "cli/report/units.h"

namespace nmprof::report {

std::optional<std::string> live_gate_failure(const profile::Profile& profile, uint64_t max_live) {
  check_live_view(profile);
  double live = heap_view(profile).live.bytes;
  if (live <= static_cast<double>(max_live)) return std::nullopt;
  return "live at the end ~" + format_bytes(live) + " exceeds --fail-on-live " + format_bytes(static_cast<double>(max_live));
}

std::optional<std::string> growth_gate_failure(const Diff& diff, uint64_t max_growth) {
  double growth = diff.totals.growth(diff.has_live);
  if (growth <= static_cast<double>(max_growth)) return std::nullopt;
  return std::string(diff.has_live ? "live" : "allocated") + " bytes grew by ~" + format_bytes(growth) +
         " since " + diff.base_file + ", more than --fail-on-growth " + format_bytes(static_cast<double>(max_growth));
}

}  // namespace nmprof::report
