#include "cli/upload/backend_labels.h"

#include <charconv>
#include <cstdio>

#include "cli/report/model/sample_labels.h"

namespace nmprof::upload {
namespace {

// Pyroscope's legacy label names, which it takes (dots become underscores).
bool pyroscope_takes(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.'))
      return false;
  return true;
}

}  // namespace

void adapt_labels(pprof::Profile& profile, bool pyroscope, std::set<std::string>* dropped) {
  for (auto& sample : profile.samples) {
    std::erase_if(sample.labels, [&](const pprof::Label& label) {
      if (label.key == report::kLocalRootSpanLabel) return true;
      if (pyroscope && !label.numeric && !pyroscope_takes(label.key)) {
        dropped->insert(label.key);
        return true;
      }
      return false;
    });
    for (auto& label : sample.labels) {
      uint64_t id = 0;
      auto [end, ec] = std::from_chars(label.text.data(), label.text.data() + label.text.size(), id);
      if (label.key == report::kSpanLabel && ec == std::errc() && end == label.text.data() + label.text.size()) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(id));
        label.text = hex;
      }
    }
  }
}

}  // namespace nmprof::upload
