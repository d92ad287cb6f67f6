// The uncertainty of sampled estimates (docs/sampling.md): the variance each sample
// adds, the interval's z at a confidence, and --confidence's reading.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "cli/report/model/sampling_error.h"
#include "profile/totals.h"

namespace nmprof::report {
namespace {

using profile::sample_totals;
using profile::Totals;

// The z of a two-sided interval holds that share of a normal distribution.
TEST(SamplingError, IntervalZHoldsTheConfidenceOfANormalDistribution) {
  for (double confidence : {0.5, 0.8, 0.9, 0.95, 0.99, 0.999}) {
    double z = interval_z(confidence);
    EXPECT_NEAR(std::erf(z / std::sqrt(2.0)), confidence, 1e-9) << confidence;
  }
  EXPECT_LT(interval_z(0.9), interval_z(0.95));
}

TEST(SamplingError, ConfidenceIsANumberStrictlyBetweenZeroAndOne) {
  EXPECT_EQ(parse_confidence("0.95"), 0.95);
  EXPECT_EQ(parse_confidence("0.5"), 0.5);
  for (const char* bad : {"", "0", "1", "95", "-0.5", "0.95x", "x", "nan", "95%"})
    EXPECT_FALSE(parse_confidence(bad).has_value()) << bad;
  EXPECT_EQ(confidence_text(0.95), "95%");
  EXPECT_EQ(confidence_text(0.999), "99.9%");
}

// A sample of weight 1 was certain to be sampled: it adds no variance; one of weight w
// adds w(w-1) size^2, and sums of samples add their variances.
TEST(SamplingError, EachSampleAddsTheVarianceItsWeightEstimates) {
  EXPECT_EQ(sample_totals(4096, 1).bytes_variance, 0);
  EXPECT_EQ(sample_totals(4096, 1).count_variance, 0);
  Totals t = sample_totals(100, 10);
  EXPECT_DOUBLE_EQ(t.bytes_variance, 10 * 9 * 100.0 * 100);
  EXPECT_DOUBLE_EQ(t.count_variance, 10 * 9);
  Totals sum;
  sum.add(t);
  sum.add(sample_totals(50, 3));
  EXPECT_DOUBLE_EQ(sum.bytes_variance, 90 * 1e4 + 6 * 2500.0);
  sum.remove(t);
  EXPECT_DOUBLE_EQ(sum.bytes_variance, 6 * 2500.0);
  sum.remove(sample_totals(50, 3));
  EXPECT_EQ(sum.bytes_variance, 0);
  EXPECT_EQ(bytes_margin(sum, 1.96), 0);
}

// The agent's sampling, simulated: each block is sampled with p = 1 - exp(-size/interval)
// and weighed 1/p. Over many runs, the estimates' own spread is what the variance each
// run estimates from its samples says, and the 95% interval holds the truth in about
// 95% of the runs.
TEST(SamplingError, TheEstimatedVarianceIsTheSpreadOfTheEstimates) {
  constexpr int kRuns = 4000, kBlocks = 2000;
  constexpr double kInterval = 512 * 1024;
  std::mt19937_64 random(39);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::uniform_int_distribution<uint64_t> sizes(16, 64 * 1024);
  std::vector<uint64_t> blocks(kBlocks);
  double truth = 0;
  for (auto& b : blocks) truth += static_cast<double>(b = sizes(random));
  double sum = 0, sum_of_squares = 0, sum_of_variances = 0;
  int covered = 0;
  double z = interval_z(0.95);
  for (int run = 0; run < kRuns; run++) {
    Totals t;
    for (uint64_t size : blocks) {
      double p = 1 - std::exp(-static_cast<double>(size) / kInterval);
      if (uniform(random) < p) t.add(sample_totals(size, static_cast<float>(1 / p)));
    }
    sum += t.bytes;
    sum_of_squares += t.bytes * t.bytes;
    sum_of_variances += t.bytes_variance;
    covered += std::abs(t.bytes - truth) <= bytes_margin(t, z);
  }
  double mean = sum / kRuns, spread = sum_of_squares / kRuns - mean * mean;
  EXPECT_NEAR(mean / truth, 1, 0.01);
  EXPECT_NEAR(sum_of_variances / kRuns / spread, 1, 0.1);
  EXPECT_NEAR(static_cast<double>(covered) / kRuns, 0.95, 0.02);
}

}  // namespace
}  // namespace nmprof::report
