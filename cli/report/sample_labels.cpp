#include "cli/report/sample_labels.h"

#include <string>

namespace nmprof::report {

std::vector<pprof::Label> sample_labels(const profile::Profile& profile, const profile::Allocation& origin) {
  std::vector<pprof::Label> labels;
  for (const auto& [key, value] : profile.processes[origin.process].tags) labels.push_back({key, value, 0, {}, false});
  auto id = [&](const char* key, uint64_t value) {
    if (value) labels.push_back({key, {}, static_cast<int64_t>(value), {}, true});
  };
  id("span_id", origin.span_id);
  id("local_root_span_id", origin.local_root_span_id);
  const auto& values = profile.contexts()[origin.context].values;
  for (size_t i = 0; i < values.size() && i < profile.context_attributes.size(); i++)
    if (!values[i].empty()) labels.push_back({profile.context_attributes[i], values[i], 0, {}, false});
  return labels;
}

}  // namespace nmprof::report
