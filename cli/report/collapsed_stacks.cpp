#include "cli/report/collapsed_stacks.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "cli/report/frame_names.h"

namespace nmprof::report {

std::string collapsed_stack(const profile::Profile& profile, const profile::Stack& stack) {
  if (stack.frames.empty()) return "[no stack]";
  std::string line;
  for (auto frame = stack.frames.rbegin(); frame != stack.frames.rend(); ++frame) {
    if (!line.empty()) line += ';';
    const profile::Frame& f = profile.frames()[*frame];
    std::string name = function_name(f);
    std::replace(name.begin(), name.end(), ';', ':');
    line += name;
    if (f.inlined) line += kInlinedSuffix;
  }
  return line;
}

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

}  // namespace nmprof::report
