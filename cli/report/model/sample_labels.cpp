#include "cli/report/model/sample_labels.h"

#include <string>

namespace nmprof::report {

std::vector<pprof::Label> sample_labels(const profile::Profile& profile, const profile::Allocation& origin) {
  std::vector<pprof::Label> labels;
  for (const auto& [key, value] : profile.processes[origin.process].tags) labels.push_back({key, value, 0, {}, false});
  // Strings, not numbers: an id is a name (pprof's numeric labels are for amounts,
  // and ids past 2^63 would not fit them).
  auto id = [&](const char* key, uint64_t value) {
    if (value) labels.push_back({key, std::to_string(value), 0, {}, false});
  };
  id(kSpanLabel, origin.span_id);
  id(kLocalRootSpanLabel, origin.local_root_span_id);
  const auto& values = profile.contexts()[origin.context].values;
  for (size_t i = 0; i < values.size() && i < profile.context_attributes.size(); i++)
    if (!values[i].empty()) labels.push_back({profile.context_attributes[i], values[i], 0, {}, false});
  return labels;
}

}  // namespace nmprof::report
