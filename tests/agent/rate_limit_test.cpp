#include "agent/sampling/rate_limit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace nmprof {
namespace {

constexpr double kSecond = 1e9;

// A process allocating `bytes_per_second` steadily: the time between its samples is
// exponential with mean interval / bytes_per_second. Returns the samples taken in
// [from, to) seconds; *clock carries the time on.
uint64_t run(RateLimit& limit, std::mt19937_64& random, double bytes_per_second, double* clock, double until) {
  uint64_t samples = 0;
  std::exponential_distribution<double> unit(1.0);
  uint64_t interval = limit.interval();
  while (true) {
    *clock += unit(random) * static_cast<double>(interval) / bytes_per_second * kSecond;
    if (*clock >= until * kSecond) return samples;
    samples++;
    interval = limit.on_sample(static_cast<uint64_t>(*clock));
  }
}

TEST(RateLimit, HoldsTheTargetOnASteadyFastLoop) {
  RateLimit limit;
  limit.start(100, 512 * 1024, 0);
  std::mt19937_64 random(1);
  double clock = 0;
  run(limit, random, 4e9, &clock, 1.0);  // converges
  uint64_t samples = run(limit, random, 4e9, &clock, 11.0);
  EXPECT_NEAR(samples / 10.0, 100.0, 15.0);
  // 4 GB/s at 100 samples/s: an interval near 40 MB.
  EXPECT_NEAR(std::log2(static_cast<double>(limit.interval()) / 4e7), 0.0, 1.0);
}

TEST(RateLimit, StartsFastWithoutAFloodOfSamples) {
  RateLimit limit;
  limit.start(100, 512 * 1024, 0);
  std::mt19937_64 random(2);
  double clock = 0;
  // 4 GB/s at 512k would be 8000 samples in the first second.
  EXPECT_LT(run(limit, random, 4e9, &clock, 1.0), 300u);
}

TEST(RateLimit, FollowsBurstsOfDifferentSpeeds) {
  RateLimit limit;
  limit.start(200, 512 * 1024, 0);
  std::mt19937_64 random(3);
  double clock = 0;
  uint64_t samples = 0;
  for (int phase = 0; phase < 20; phase++)
    samples += run(limit, random, phase % 2 ? 5e9 : 5e7, &clock, (phase + 1) * 0.5);
  EXPECT_NEAR(samples / 10.0, 200.0, 60.0);
}

TEST(RateLimit, StaysWithinItsBoundsAndReportsTheRangeUsed) {
  RateLimit limit;
  limit.start(1000000, 512 * 1024, 0);  // more than a slow process can give
  std::mt19937_64 random(4);
  double clock = 0;
  run(limit, random, 1e6, &clock, 5.0);
  EXPECT_EQ(limit.interval(), limit.lowest());
  EXPECT_EQ(limit.lowest(), 8192u);
  EXPECT_EQ(limit.min_used(), limit.lowest());
  EXPECT_EQ(limit.max_used(), 512u * 1024);

  limit.start(1, 512 * 1024, 0);  // less than a fast one would give at the highest interval
  clock = 0;
  run(limit, random, 1e12, &clock, 5.0);
  EXPECT_EQ(limit.interval(), limit.highest());
  EXPECT_EQ(limit.max_used(), 512ull * 1024 * 1024);
}

TEST(RateLimit, IsOffWithoutATarget) {
  RateLimit limit;
  limit.start(0, 512 * 1024, 0);
  EXPECT_FALSE(limit.active());
}

}  // namespace
}  // namespace nmprof
