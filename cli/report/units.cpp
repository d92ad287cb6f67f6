#include "cli/report/units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

namespace nmprof::report {
namespace {

// Three significant digits: 1.50, 12.3, 123.
std::string three_digits(double v, const char* unit) {
  char buf[32];
  const char* format = v < 9.995 ? "%.2f%s" : v < 99.95 ? "%.1f%s" : "%.0f%s";
  snprintf(buf, sizeof buf, format, v, unit);
  return buf;
}

}  // namespace

std::string format_bytes(double bytes) {
  static const char* const units[] = {" KiB", " MiB", " GiB", " TiB", " PiB"};
  if (bytes < 1023.5) {
    char buf[32];
    snprintf(buf, sizeof buf, "%.0f B", std::max(bytes, 0.0));
    return buf;
  }
  double v = bytes / 1024;
  size_t unit = 0;
  while (v >= 1023.5 && unit + 1 < std::size(units)) {
    v /= 1024;
    unit++;
  }
  return three_digits(v, units[unit]);
}

std::string format_count(double count) {
  double n = std::round(std::max(count, 0.0));
  if (n < 100000) {
    std::string digits = std::to_string(static_cast<int64_t>(n)), grouped;
    for (size_t i = 0; i < digits.size(); i++) {
      if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
      grouped += digits[i];
    }
    return grouped;
  }
  static const char* const units[] = {"K", "M", "G", "T"};
  double v = n / 1000;
  size_t unit = 0;
  while (v >= 999.5 && unit + 1 < std::size(units)) {
    v /= 1000;
    unit++;
  }
  return three_digits(v, units[unit]);
}

std::string counted(uint64_t count, const char* singular, const char* plural) {
  return format_count(static_cast<double>(count)) + " " + (count == 1 ? singular : plural);
}

std::string format_duration(int64_t nanos) {
  char buf[32];
  double s = static_cast<double>(std::max<int64_t>(nanos, 0)) / 1e9;
  if (s < 1e-3)
    snprintf(buf, sizeof buf, "%.0f us", s * 1e6);
  else if (s < 1)
    snprintf(buf, sizeof buf, "%.0f ms", s * 1e3);
  else if (s < 59.95)
    snprintf(buf, sizeof buf, "%.1f s", s);
  else if (s < 3600)
    snprintf(buf, sizeof buf, "%dm %02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else  // up to the ~146 years of a JFR time (chunk_header.h): past int
    snprintf(buf, sizeof buf, "%lldh %02lldm", static_cast<long long>(s) / 3600, static_cast<long long>(s) / 60 % 60);
  return buf;
}

std::string format_percent(double fraction) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.1f%%", fraction * 100);
  return buf;
}

}  // namespace nmprof::report
