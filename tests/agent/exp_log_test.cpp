#include "agent/sampling/exp_log.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace nmprof::exp_log {
namespace {

// Relative difference in units of double precision (2^-52).
double ulps(double got, double want) { return std::abs(got - want) / (std::abs(want) * 0x1.0p-52); }

TEST(ExpLog, NaturalLogMatchesLibmOverTheUniformDraws) {
  // Every binade a draw can fall in (53 random bits: 2^-53 to 1), and points within each.
  for (int e = 0; e <= 53; e++) {
    for (uint64_t step = 0; step < 997; step++) {
      double x = std::ldexp(1.0 + static_cast<double>(step) / 997, -e - 1);
      if (x > 1) continue;
      EXPECT_LE(ulps(natural_log(x), std::log(x)), 4) << x;
    }
  }
  EXPECT_EQ(natural_log(1.0), 0.0);
  EXPECT_LE(ulps(natural_log(0x1.0p-1074), std::log(0x1.0p-1074)), 4);  // subnormal
  EXPECT_LE(ulps(natural_log(1e300), std::log(1e300)), 4);
}

TEST(ExpLog, ExpMinusOneMatchesLibmFromTinyRatiosToHugeOnes) {
  // -size/interval: 1 byte in 1 TiB up to allocations far larger than the interval.
  for (double x = -1e-13; x > -800; x *= 1.01) EXPECT_LE(ulps(exp_minus_one(x), std::expm1(x)), 4) << x;
  EXPECT_EQ(exp_minus_one(0.0), 0.0);
  EXPECT_EQ(exp_minus_one(-1e6), -1.0);
}

}  // namespace
}  // namespace nmprof::exp_log
