#include "cli/report/model/sampling_error.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace nmprof::report {

double interval_z(double confidence) {
  // The normal distribution's upper tail, 0.5 * erfc(z / sqrt 2), falls as z grows:
  // halve the range that holds the z whose tail is (1 - confidence) / 2.
  double tail = (1 - confidence) / 2, low = 0, high = 40;
  for (int i = 0; i < 200; i++) {
    double mid = (low + high) / 2;
    (0.5 * std::erfc(mid / std::sqrt(2.0)) > tail ? low : high) = mid;
  }
  return (low + high) / 2;
}

uint64_t largest_interval(const profile::Profile& profile) {
  uint64_t largest = 0;
  for (const auto& p : profile.processes) {
    largest = std::max(largest, p.sampling_interval().value_or(0));
    for (const auto& s : p.statistics)
      if (s.name == "maxInterval" && s.value > 0) largest = std::max(largest, static_cast<uint64_t>(s.value));
  }
  return largest;
}

std::optional<double> parse_confidence(const std::string& text) {
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !(value > 0 && value < 1)) return std::nullopt;
  return value;
}

std::string confidence_text(double confidence) {
  char text[32];
  snprintf(text, sizeof text, "%.10g%%", confidence * 100);
  return text;
}

}  // namespace nmprof::report
