#include "cli/report/render/collapsed_stacks.h"

#include <cmath>
#include <map>

#include "cli/report/model/frame_names.h"

namespace nmprof::report {

double collapsed_value(const Totals& totals, Value value) { return value == Value::Bytes ? totals.bytes : totals.count; }

void write_collapsed(const profile::Profile& profile, const HeapView& view, bool live, Value value, std::ostream& out) {
  std::map<std::string, double> lines;
  for (const auto& s : view.stacks)
    lines[collapsed_stack(profile, profile.stacks()[s.stack])] += collapsed_value(live ? s.live : s.allocated, value);
  for (const auto& [stack, v] : lines) {
    long long rounded = std::llround(v);
    if (rounded > 0) out << stack << ' ' << rounded << '\n';
  }
}

void write_diff_collapsed(const Diff& d, Value value, std::ostream& out) {
  for (const DiffRow& r : d.stacks) {
    long long base = std::llround(collapsed_value(r.values.view(d.live, false), value));
    long long now = std::llround(collapsed_value(r.values.view(d.live, true), value));
    if (base || now) out << collapsed_stack(*r.profile, r.profile->stacks()[r.id]) << ' ' << base << ' ' << now << '\n';
  }
}

}  // namespace nmprof::report
