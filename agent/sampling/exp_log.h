// The natural logarithm and exp(x) - 1 that sampling needs, computed here so that the
// agent does not need libm: loading one more library costs every process that the
// agent is preloaded into about 0.3 ms of CPU time (a shell script's commands each pay
// it). Accurate to a few units in the last place over the ranges sampling uses.
#pragma once

#include <cstdint>
#include <cstring>

namespace nmprof::exp_log {

constexpr double kLn2 = 0.69314718055994530942;

// ln(x) for finite x > 0. x = m * 2^e with m in [sqrt(1/2), sqrt(2)); then
// ln(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.172, whose odd series
// converges by a factor s^2 <= 0.03 per term.
inline double natural_log(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  int exponent = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  if (exponent == -1023) return natural_log(x * 0x1.0p54) - 54 * kLn2;  // subnormal
  bits = (bits & ~(uint64_t{0x7ff} << 52)) | (uint64_t{1023} << 52);  // m in [1, 2)
  double m;
  std::memcpy(&m, &bits, sizeof m);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    exponent++;
  }
  double s = (m - 1) / (m + 1), s2 = s * s;
  double series = 1.0 / 19;
  for (int k = 17; k >= 3; k -= 2) series = 1.0 / k + s2 * series;
  return exponent * kLn2 + 2 * s * (1 + s2 * series);
}

// 1/k for the series below: a multiplication costs a few cycles, a division tens
// (a tracked block's weight is worked out on every realloc of it).
inline constexpr double kInverse[18] = {0,       1,       1.0 / 2,  1.0 / 3,  1.0 / 4,  1.0 / 5,
                                        1.0 / 6, 1.0 / 7, 1.0 / 8,  1.0 / 9,  1.0 / 10, 1.0 / 11,
                                        1.0 / 12, 1.0 / 13, 1.0 / 14, 1.0 / 15, 1.0 / 16, 1.0 / 17};

// exp(x) - 1 for x <= 0, without the cancellation of computing exp(x) first when x
// is near 0 (a sample's weight depends on it when the size is small next to the
// interval).
inline double exp_minus_one(double x) {
  if (x > -0.5) {  // Taylor series: the 17th term is below 1e-20
    double term = x, sum = x;
    for (int k = 2; k <= 17; k++) sum += term *= x * kInverse[k];
    return sum;
  }
  if (x < -40) return -1;  // exp(x) < 2^-57: -1 + exp(x) rounds to -1
  // exp(x) = 2^n * exp(r), r = x - n ln2 in [-ln2/2, ln2/2]; 2^n is a normal double.
  int n = static_cast<int>(x / kLn2 - 0.5);
  double r = x - n * kLn2;
  double term = 1, exp_r = 1;
  for (int k = 1; k <= 17; k++) exp_r += term *= r * kInverse[k];
  uint64_t scale_bits = static_cast<uint64_t>(n + 1023) << 52;
  double scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  return exp_r * scale - 1;
}

}  // namespace nmprof::exp_log
