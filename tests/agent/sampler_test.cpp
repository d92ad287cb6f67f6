#include "agent/sampling/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace nmprof {
namespace {

struct Estimate {
  double bytes = 0;
  double count = 0;
  uint64_t samples = 0;
  double variance = 0;  // of the byte estimate, from the known sizes
};

// Drives the sampler exactly as the hooks do, over a sequence of allocation sizes.
// after_sample(): what happens to the interval once a sample's next countdown is drawn
// (another thread's rate controller may change it at any time).
Estimate simulate(uint64_t interval, const std::vector<uint32_t>& sizes, int repeat = 1,
                  void (*after_sample)() = nullptr) {
  Sampler::set_interval(interval);
  t_state = ThreadState{};
  Estimate e;
  for (int r = 0; r < repeat; r++) {
    for (uint32_t size : sizes) {
      if (Sampler::countdown(size) && Sampler::confirm(t_state, size)) {
        double w = Sampler::weight(t_state, size);
        e.bytes += w * size;
        e.count += w;
        e.samples++;
        Sampler::restart(t_state);
        if (after_sample) after_sample();
      }
      if (interval) {
        double p = -std::expm1(-static_cast<double>(size) / static_cast<double>(interval));
        e.variance += static_cast<double>(size) * size * (1 - p) / p;
      }
    }
  }
  return e;
}

TEST(Sampler, GapsAreExponentialWithTheIntervalAsMean) {
  Sampler::set_interval(512 * 1024);
  ThreadState t{};
  Sampler::seed(t, 1);
  const int n = 1000000;
  double sum = 0;
  int above_mean = 0;
  for (int i = 0; i < n; i++) {
    double gap = static_cast<double>(Sampler::next_gap(t));
    ASSERT_GT(gap, 0);
    sum += gap;
    above_mean += gap > 512 * 1024;
  }
  double mean = sum / n;
  // The standard deviation of an exponential equals its mean: 5 sigma of the mean is 0.5%.
  EXPECT_NEAR(mean, 512 * 1024, 5 * 512 * 1024 / std::sqrt(n));
  // P(gap > mean) = 1/e.
  double p = std::exp(-1.0);
  EXPECT_NEAR(above_mean / static_cast<double>(n), p, 5 * std::sqrt(p * (1 - p) / n));
}

TEST(Sampler, WeightedSumsEstimateBytesAndCountsWithoutBias) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<uint32_t> size(16, 4096);
  std::vector<uint32_t> sizes(2000000);
  double true_bytes = 0;
  for (auto& s : sizes) true_bytes += s = size(rng);
  const int repeat = 5;  // 10 million allocations, ~20 GB
  Estimate e = simulate(512 * 1024, sizes, repeat);
  true_bytes *= repeat;
  double true_count = static_cast<double>(sizes.size()) * repeat;
  EXPECT_NEAR(e.bytes, true_bytes, 5 * std::sqrt(e.variance));
  // Count estimate: sum of weights; its variance is sum (1-p)/p, which is at most the
  // byte variance divided by the smallest size squared.
  EXPECT_NEAR(e.count, true_count, 5 * std::sqrt(e.variance) / 16);
  // About one sample per 512 KiB allocated.
  double expected_samples = true_bytes / (512 * 1024);
  EXPECT_NEAR(static_cast<double>(e.samples), expected_samples, 5 * std::sqrt(expected_samples) + 0.01 * expected_samples);
}

TEST(Sampler, TinyAllocationsAreEstimatedWithoutBiasToo) {
  std::vector<uint32_t> sizes(10000000, 16);
  Estimate e = simulate(512 * 1024, sizes);
  EXPECT_NEAR(e.bytes, 16.0 * 1e7, 5 * std::sqrt(e.variance));
  EXPECT_NEAR(e.count, 1e7, 5 * std::sqrt(e.variance) / 16);
}

TEST(Sampler, LargeAllocationsAreAlwaysSampledWithWeightNearOne) {
  std::vector<uint32_t> sizes(1000, 64 << 20);
  Estimate e = simulate(512 * 1024, sizes);
  EXPECT_EQ(e.samples, 1000u);
  EXPECT_DOUBLE_EQ(e.count, 1000.0);
  EXPECT_FLOAT_EQ(Sampler::weight(64 << 20, 512 * 1024), 1.0f);
}

TEST(Sampler, IntervalZeroRecordsEveryAllocationWithWeightOne) {
  std::vector<uint32_t> sizes = {1, 16, 100, 4096, 1 << 20};
  Estimate e = simulate(0, sizes, 100);
  EXPECT_EQ(e.samples, 500u);
  EXPECT_DOUBLE_EQ(e.count, 500.0);
  EXPECT_DOUBLE_EQ(e.bytes, 100.0 * (1 + 16 + 100 + 4096 + (1 << 20)));
}

TEST(Sampler, WeightIsTheInverseSamplingProbability) {
  EXPECT_NEAR(Sampler::weight(1000, 1000), 1 / (1 - std::exp(-1.0)), 1e-5);
  EXPECT_NEAR(Sampler::weight(1, 1000), 1 / (1 - std::exp(-0.001)), 1e-2);
  EXPECT_FLOAT_EQ(Sampler::weight(0, 1000), 1.0f);
  // Around 17 intervals, where the weight stops being worked out: the float it would be.
  for (uint64_t size = 16 * 1000; size <= 18 * 1000; size += 250)
    EXPECT_EQ(Sampler::weight(size, 1000), static_cast<float>(1 / -std::expm1(-(size / 1000.0)))) << size;
}

// --rate changes the interval while countdowns are under way: each sample must be
// weighted with the interval its countdown was drawn with, not the one now in force.
TEST(Sampler, EstimatesStayUnbiasedWhenTheIntervalChangesBetweenSamples) {
  std::vector<uint32_t> sizes(200000, 1000);
  Estimate e = simulate(4096, sizes, 10, [] {
    Sampler::set_interval(Sampler::interval() == 4096 ? 256 * 1024 : 4096);
  });
  double truth = 2e9;
  EXPECT_GT(e.samples, 1000u);
  // The byte estimate's standard deviation is at most sqrt(samples) * 256k-ish; 5% is
  // many deviations here, and far below the factor a wrong weight makes.
  EXPECT_NEAR(e.bytes / truth, 1.0, 0.05);
  EXPECT_NEAR(e.count / 2e6, 1.0, 0.05);
}

TEST(Sampler, ThreadsStartWithIndependentCountdowns) {
  Sampler::set_interval(512 * 1024);
  ThreadState a{}, b{};
  Sampler::seed(a, 1);
  Sampler::seed(b, 2);
  EXPECT_NE(Sampler::next_gap(a), Sampler::next_gap(b));
}

// chance() thins the blocks reallocs shrink: true with the probability asked for.
TEST(Sampler, ChanceIsTrueWithTheProbabilityAsked) {
  Sampler::set_interval(512 * 1024);
  ThreadState t{};
  Sampler::seed(t, 3);
  const int n = 1000000;
  for (double p : {0.0, 0.01, 0.3, 0.9, 1.0}) {
    int hits = 0;
    for (int i = 0; i < n; i++) hits += Sampler::chance(t, p);
    EXPECT_NEAR(hits / static_cast<double>(n), p, 5 * std::sqrt(p * (1 - p) / n) + 1e-9) << p;
  }
}

// A thread's first call to chance() seeds it: its countdown must be drawn then too,
// else confirm() takes the seeded thread's first crossing for a sample.
TEST(Sampler, ChanceOnAFreshThreadDoesNotMakeItsFirstAllocationASample) {
  Sampler::set_interval(512 * 1024);
  int samples = 0;
  for (int i = 0; i < 1000; i++) {
    t_state = ThreadState{};
    Sampler::chance(t_state, 0.5);
    samples += Sampler::countdown(16) && Sampler::confirm(t_state, 16);
  }
  EXPECT_LE(samples, 1);  // 16 bytes of 512 KiB: about 3 in 100,000
}

}  // namespace
}  // namespace nmprof
