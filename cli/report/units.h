// Human-readable numbers for reports: binary byte units, short counts, durations.
#pragma once

#include <cstdint>
#include <string>

namespace nmprof::report {

std::string format_bytes(double bytes);  // "512 B", "1.50 KiB", "12.3 MiB", "123 GiB"
std::string format_count(double count);  // "812", "12,345", "123K", "1.23M"
// A count with its noun: "1 sample", "12,345 samples".
std::string counted(uint64_t count, const char* singular, const char* plural);
std::string format_duration(int64_t nanos);   // "850 us", "12 ms", "3.4 s", "2m 05s", "1h 02m"
std::string format_percent(double fraction);  // 0.349 -> "34.9%"
// part / whole, or 0 when there is no whole.
inline double fraction(double part, double whole) { return whole > 0 ? part / whole : 0; }

}  // namespace nmprof::report
