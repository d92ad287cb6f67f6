// Aggregation by stack and function, live pairing and ages, on hand-built profiles
// with known answers.
#include "cli/report/model/aggregation.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/report/profile_maker.h"

namespace nmprof::report {
namespace {

using testing::ProfileMaker;

std::vector<uint32_t> all(const profile::Profile& p) {
  std::vector<uint32_t> indexes(p.allocations().size());
  for (uint32_t i = 0; i < indexes.size(); i++) indexes[i] = i;
  return indexes;
}

const FunctionRow& row(const profile::Profile& p, const Aggregate& a, const std::string& function) {
  for (const auto& r : a.functions)
    if (r.frame != kNoFrame && p.frames()[r.frame].function == function) return r;
  throw std::runtime_error("no row for " + function);
}

// Stacks (innermost first) and estimated bytes:
//   a < b < main       1000 (100 B x weight 10) + 100 (50 B x 2) = 1100
//   b < main            400
//   c < b < c < main    500 (c twice: recursion)
// Total 2000.
struct Example {
  ProfileMaker m;
  uint32_t abm, bm, cbcm;
  Example() {
    uint32_t p = m.process(1, 0, 1000);
    abm = m.stack({"a", "b", "main"});
    bm = m.stack({"b", "main"});
    cbcm = m.stack({"c", "b", "c", "main"});
    m.alloc(p, abm, 1, 0x10, 100, 10);
    m.alloc(p, bm, 2, 0x20, 400, 1);
    m.alloc(p, abm, 3, 0x30, 50, 2);
    m.alloc(p, cbcm, 4, 0x40, 500, 1);
  }
};

TEST(Aggregation, SumsEstimatesByStack) {
  Example e;
  Aggregate a = aggregate(e.m.profile, all(e.m.profile), false);
  EXPECT_EQ(a.totals.samples, 4u);
  EXPECT_DOUBLE_EQ(a.totals.bytes, 2000);
  EXPECT_DOUBLE_EQ(a.totals.count, 14);
  ASSERT_EQ(a.stacks.size(), 3u);
  EXPECT_EQ(a.stacks[0].stack, e.abm);
  EXPECT_DOUBLE_EQ(a.stacks[0].totals.bytes, 1100);
  EXPECT_DOUBLE_EQ(a.stacks[0].totals.count, 12);
  EXPECT_EQ(a.stacks[0].totals.samples, 2u);
  EXPECT_EQ(a.stacks[1].stack, e.cbcm);
  EXPECT_EQ(a.stacks[2].stack, e.bm);
  ASSERT_EQ(a.stacks[0].processes.size(), 1u);
  EXPECT_DOUBLE_EQ(a.stacks[0].processes[0].second, 1100);
}

TEST(Aggregation, FunctionsGetSelfAndTotalWithRecursionCountedOnce) {
  Example e;
  const auto& p = e.m.profile;
  Aggregate a = aggregate(p, all(p), false);
  ASSERT_EQ(a.functions.size(), 4u);
  std::vector<std::string> order;
  for (const auto& r : a.functions) order.push_back(p.frames()[r.frame].function);
  EXPECT_EQ(order, (std::vector<std::string>{"a", "c", "b", "main"}));  // by self bytes
  EXPECT_DOUBLE_EQ(row(p, a, "a").self.bytes, 1100);
  EXPECT_DOUBLE_EQ(row(p, a, "a").total.bytes, 1100);
  EXPECT_DOUBLE_EQ(row(p, a, "b").self.bytes, 400);
  EXPECT_DOUBLE_EQ(row(p, a, "b").total.bytes, 2000);
  EXPECT_DOUBLE_EQ(row(p, a, "c").self.bytes, 500);
  EXPECT_DOUBLE_EQ(row(p, a, "c").total.bytes, 500);
  EXPECT_EQ(row(p, a, "c").total.samples, 1u);
  EXPECT_DOUBLE_EQ(row(p, a, "main").self.bytes, 0);
  EXPECT_DOUBLE_EQ(row(p, a, "main").total.bytes, 2000);
  EXPECT_DOUBLE_EQ(row(p, a, "main").total.count, 14);
}

TEST(Aggregation, FramesOfOneFunctionShareARowAndEmptyStacksGetTheirOwn) {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, 10);
  profile::Stack lines;  // one Java method at two lines
  lines.frames = {m.profile.add_frame({"run", "app.Worker", profile::FrameKind::Interpreted, 10, {}}),
                  m.profile.add_frame({"run", "app.Worker", profile::FrameKind::JitCompiled, 20, {}})};
  uint32_t java = m.profile.add_stack(lines);
  m.alloc(p, java, 1, 0, 100);
  m.alloc(p, m.profile.add_stack({}), 2, 0, 30);
  Aggregate a = aggregate(m.profile, all(m.profile), false);
  ASSERT_EQ(a.functions.size(), 2u);
  EXPECT_DOUBLE_EQ(a.functions[0].self.bytes, 100);
  EXPECT_DOUBLE_EQ(a.functions[0].total.bytes, 100);
  EXPECT_EQ(a.functions[1].frame, kNoFrame);
  EXPECT_DOUBLE_EQ(a.functions[1].self.bytes, 30);
}

TEST(Aggregation, PhpFunctionsOwnTheEngineFramesInsideThem) {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, 10);
  auto frame = [&](const char* function, const char* container, profile::FrameKind kind) {
    return m.profile.add_frame({function, container, kind, -1, {}});
  };
  using profile::FrameKind;
  profile::Stack php;  // the engine's frames inside a built-in PHP function inside the script's
  php.frames = {frame("zend_string_alloc", "php", FrameKind::Native), frame("zif_str_repeat", "php", FrameKind::Native),
                frame("str_repeat", "[internal function]", FrameKind::Php),
                frame("build", "/app/index.php", FrameKind::Php), frame("{main}", "/app/index.php", FrameKind::Php)};
  profile::Stack java;  // native code under Java keeps its self bytes
  java.frames = {frame("my_alloc", "libnative.so", FrameKind::Native), frame("alloc", "app.Native", FrameKind::Java)};
  m.alloc(p, m.profile.add_stack(php), 1, 0, 100);
  m.alloc(p, m.profile.add_stack(java), 2, 0, 50);
  const auto& pr = m.profile;
  Aggregate a = aggregate(pr, all(pr), false);
  EXPECT_EQ(pr.frames()[a.functions[0].frame].function, "str_repeat");
  EXPECT_DOUBLE_EQ(row(pr, a, "str_repeat").self.bytes, 100);
  EXPECT_DOUBLE_EQ(row(pr, a, "zend_string_alloc").self.bytes, 0);
  EXPECT_DOUBLE_EQ(row(pr, a, "zend_string_alloc").total.bytes, 100);
  EXPECT_DOUBLE_EQ(row(pr, a, "build").self.bytes, 0);
  EXPECT_DOUBLE_EQ(row(pr, a, "build").total.bytes, 100);
  EXPECT_DOUBLE_EQ(row(pr, a, "my_alloc").self.bytes, 50);
  EXPECT_DOUBLE_EQ(row(pr, a, "alloc").self.bytes, 0);
}

TEST(Aggregation, AttributesStacksToProcesses) {
  ProfileMaker m;
  uint32_t p1 = m.process(1, 0, 10), p2 = m.process(2, 0, 10);
  uint32_t st = m.stack({"f", "main"});
  m.alloc(p1, st, 1, 0, 100);
  m.alloc(p2, st, 1, 0, 300);
  Aggregate a = aggregate(m.profile, all(m.profile), false);
  ASSERT_EQ(a.stacks.size(), 1u);
  ASSERT_EQ(a.stacks[0].processes.size(), 2u);
  EXPECT_EQ(a.stacks[0].processes[0], (std::pair<uint32_t, double>{p2, 300}));
  EXPECT_EQ(a.stacks[0].processes[1], (std::pair<uint32_t, double>{p1, 100}));
}

TEST(Aggregation, LiveViewSumsWhatIsNotFreed) {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, 100);
  uint32_t kept = m.stack({"kept"}), freed = m.stack({"freed"});
  m.alloc(p, kept, 1, 0x10, 100, 2);
  m.alloc(p, kept, 2, 0x20, 50, 2);
  m.alloc(p, freed, 3, 0x30, 70);
  m.free(p, 4, 0x20);
  m.free(p, 5, 0x30);
  Aggregate live = aggregate(m.profile, all(m.profile), true);
  ASSERT_EQ(live.stacks.size(), 1u);  // a stack with nothing live has no row
  EXPECT_EQ(live.stacks[0].stack, kept);
  EXPECT_DOUBLE_EQ(live.totals.bytes, 200);
  EXPECT_EQ(live.totals.samples, 1u);
  EXPECT_DOUBLE_EQ(aggregate(m.profile, all(m.profile), false).totals.bytes, 370);
}

TEST(AgeSummary, MedianOldestAndQuartersOfTheRecording) {
  ProfileMaker m;
  uint32_t p = m.process(1, 1000, 2000);
  uint32_t st = m.stack({"f"});
  m.alloc(p, st, 1000, 1, 100);
  m.alloc(p, st, 1100, 2, 100);
  m.alloc(p, st, 1900, 3, 100, 2);
  AgeSummary age = age_summary(m.profile, m.profile.live_samples());
  EXPECT_EQ(age.oldest_nanos, 1000);
  EXPECT_EQ(age.median_nanos, 900);  // 200 of the 400 bytes are 900 ns old or older
  EXPECT_DOUBLE_EQ(age.share_by_quarter[0], 0.5);
  EXPECT_DOUBLE_EQ(age.share_by_quarter[1], 0);
  EXPECT_DOUBLE_EQ(age.share_by_quarter[2], 0);
  EXPECT_DOUBLE_EQ(age.share_by_quarter[3], 0.5);
}

}  // namespace
}  // namespace nmprof::report
