// The CI gates decide at a confidence: they fail when the estimate's interval lies
// above the limit, pass when a recording of the limit would have estimated more, and
// otherwise say they cannot decide, with the --nativemem that would.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "cli/exit_codes.h"
#include "cli/report/model/ci_gate.h"
#include "cli/report/model/diff_report.h"
#include "tests/report/profile_maker.h"

namespace nmprof::report {
namespace {

using testing::ProfileMaker;
using Outcome = Verdict::Outcome;

constexpr uint64_t kBlock = 4096, kInterval = 512 * 1024, kMiB = 1 << 20;
constexpr int64_t kS = 1'000'000'000;

// A recording whose `live` blocks of 4 KiB are left at its end, each a sample at
// `interval` (0: every allocation recorded), and `freed` more that were freed.
profile::Profile recording(int live, uint64_t interval, int freed = 0) {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, 10 * kS);
  m.profile.processes[p].weighted = true;
  m.profile.processes[p].settings["live"] = "true";
  m.profile.processes[p].settings["nativemem"] = std::to_string(interval);
  float weight = interval ? static_cast<float>(1 / (1 - std::exp(-double(kBlock) / double(interval)))) : 1;
  uint32_t leak = m.stack({"site_leak", "main"}), churn = m.stack({"site_churn", "main"});
  uint64_t address = 0x1000;
  for (int i = 0; i < live; i++) m.alloc(p, leak, kS, address += kBlock, kBlock, weight);
  for (int i = 0; i < freed; i++) {
    m.alloc(p, churn, kS, address += kBlock, kBlock, weight);
    m.free(p, 2 * kS, address);
  }
  m.profile.settle();
  return std::move(m.profile);
}

// 80 samples at 512 KiB: ~40 MiB live, give or take ~9 MiB at 95%.
TEST(CiGate, LiveFailsWhenTheIntervalLiesAboveTheLimitAndPassesWhenTheDataRulesItOut) {
  profile::Profile p = recording(80, kInterval);
  Verdict far_above = live_gate(p, 16 * kMiB, 0.95);
  EXPECT_EQ(far_above.outcome, Outcome::Fail) << far_above.reason;
  EXPECT_NE(far_above.reason.find("\u00b1"), std::string::npos) << far_above.reason;
  EXPECT_EQ(gate_exit_status(far_above), cli::kExitGate);
  Verdict far_below = live_gate(p, 64 * kMiB, 0.95);
  EXPECT_EQ(far_below.outcome, Outcome::Pass) << far_below.reason;
  EXPECT_EQ(gate_exit_status(far_below), 0);
}

TEST(CiGate, LiveCannotDecideWithinTheIntervalAndSuggestsASmallerInterval) {
  profile::Profile p = recording(80, kInterval);
  Verdict close = live_gate(p, 40 * kMiB, 0.95);
  ASSERT_EQ(close.outcome, Outcome::Undecided) << close.reason;
  EXPECT_EQ(gate_exit_status(close), cli::kExitUndecided);
  EXPECT_EQ(cli::kExitUndecided, 4);  // documented in docs/reports.md and man/nmprof.1
  size_t at = close.reason.find("--nativemem ");
  ASSERT_NE(at, std::string::npos) << close.reason;
  uint64_t suggested = std::stoull(close.reason.substr(at + 12)) * (close.reason.find('k', at + 12) != std::string::npos ? 1024 : 1);
  EXPECT_LT(suggested, kInterval) << close.reason;
  EXPECT_NE(verdict_text(close).find("undecided: cannot decide --fail-on-live 40.0 MiB at 95%"), std::string::npos)
      << verdict_text(close);
}

// A higher confidence asks for more evidence: what fails at 95% is undecided at 99.9%.
TEST(CiGate, AHigherConfidenceWidensTheInterval) {
  profile::Profile p = recording(80, kInterval);
  EXPECT_EQ(live_gate(p, 30 * kMiB, 0.95).outcome, Outcome::Fail);
  EXPECT_EQ(live_gate(p, 30 * kMiB, 0.999).outcome, Outcome::Undecided);
}

// Every allocation recorded: the estimate is exact, and one byte decides.
TEST(CiGate, EveryAllocationRecordedDecidesExactly) {
  profile::Profile p = recording(100, 0, 10);
  EXPECT_EQ(live_gate(p, 100 * kBlock - 1, 0.95).outcome, Outcome::Fail);
  EXPECT_EQ(live_gate(p, 100 * kBlock, 0.95).outcome, Outcome::Pass);
}

// No live sample at all: a limit much larger than the interval would have left some
// (pass); one about as large as the interval might have left none (undecided).
TEST(CiGate, NothingLiveRulesOutOnlyLimitsThatWouldHaveBeenSampled) {
  profile::Profile p = recording(0, kInterval, 20);
  EXPECT_EQ(live_gate(p, 8 * kMiB, 0.95).outcome, Outcome::Pass);
  EXPECT_EQ(live_gate(p, kInterval, 0.95).outcome, Outcome::Undecided);
}

TEST(CiGate, GrowthDecidesOnTheChangeAndBothRecordingsSpread) {
  profile::Profile base = recording(40, kInterval), now = recording(120, kInterval);
  Diff diff = diff_profiles(base, now, true);
  EXPECT_EQ(growth_gate(diff, now, 16 * kMiB, 0.95).outcome, Outcome::Fail);
  EXPECT_EQ(growth_gate(diff, now, 128 * kMiB, 0.95).outcome, Outcome::Pass);
  EXPECT_EQ(growth_gate(diff, now, 40 * kMiB, 0.95).outcome, Outcome::Undecided);
  EXPECT_TRUE(diff.totals.significant(true, 1.96));
  Diff same = diff_profiles(base, recording(42, kInterval), true);
  EXPECT_FALSE(same.totals.significant(true, 1.96));
  EXPECT_GT(same.totals.growth_margin(true, 1.96), 0);
}

}  // namespace
}  // namespace nmprof::report
