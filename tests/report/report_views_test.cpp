// The report's views built from a hand-made profile: timeline, peek, filters (issue 17).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <sstream>
#include <limits>

#include "cli/report/model/aggregation.h"
#include "cli/report/model/diff_report.h"
#include "cli/report/model/heap_view.h"
#include "cli/report/model/peek.h"
#include "cli/report/model/report.h"
#include "cli/report/model/sample_filter.h"
#include "cli/report/model/timeline.h"
#include "cli/report/render/text_report.h"
#include "cli/report/units.h"
#include "tests/report/profile_maker.h"

namespace nmprof::report {
namespace {

using testing::ProfileMaker;

constexpr int64_t kS = 1'000'000'000;

// Two stacks the same in their top --depth frames show where they part.
TEST(TextStacks, StacksThatDifferBelowTheDepthShowTheFrameThatTellsThemApart) {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, 10 * kS);
  std::vector<std::string> top = {"alloc", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9"};
  auto stack = [&](const char* thread) {
    std::vector<std::string> frames = top;
    frames.insert(frames.end(), {thread, "start_thread"});
    return m.stack(frames);
  };
  m.alloc(p, stack("worker_thread"), 1 * kS, 0x10, 3000);
  m.alloc(p, stack("admin_thread"), 2 * kS, 0x20, 1000);
  m.alloc(p, m.stack({"alloc", "f1", "lone_caller"}), 3 * kS, 0x30, 500);
  ReportOptions options;
  options.depth = 4;
  std::ostringstream text;
  write_text_report(build_report(m.profile, options), text);
  const std::string t = text.str();
  size_t first = t.find("#1 "), second = t.find("#2 "), third = t.find("#3 ");
  ASSERT_TRUE(first != std::string::npos && second != std::string::npos && third != std::string::npos) << t;
  std::string worker = t.substr(first, second - first), admin = t.substr(second, third - second);
  for (const std::string& s : {worker, admin}) {
    EXPECT_NE(s.find("      f3  "), std::string::npos) << s;
    EXPECT_EQ(s.find("      f4  "), std::string::npos) << s;
    EXPECT_NE(s.find("      ... 6 frames ...\n"), std::string::npos) << s;
    EXPECT_NE(s.find("      ... 1 more frame (--depth 12 shows it)"), std::string::npos) << s;
  }
  EXPECT_NE(worker.find("      worker_thread  "), std::string::npos) << worker;
  EXPECT_NE(admin.find("      admin_thread  "), std::string::npos) << admin;
  // The third differs within its top frames: cut as usual.
  EXPECT_EQ(t.substr(third).find(" frames ..."), std::string::npos) << t;
}

// The library column lines up from one stack to the next (it moved with each stack's
// longest library name: libjvm.so rows against java-native ones).
TEST(TextStacks, TheLibraryColumnIsTheSameForEveryStack) {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, 10 * kS);
  m.alloc(p, m.stack({"allocateMemory0@java-native-methods", "allocateMemory@java"}), 1 * kS, 0x10, 3000);
  m.alloc(p, m.stack({"G1CollectedHeap::G1CollectedHeap()@libjvm.so", "create_vm@libjvm.so"}), 2 * kS, 0x20, 1000);
  std::ostringstream text;
  write_text_report(build_report(m.profile, {}), text);
  std::istringstream lines(text.str());
  std::set<size_t> columns;
  for (std::string line; std::getline(lines, line);) {
    for (const char* library : {"java-native-methods", "java", "libjvm.so"}) {
      if (line.starts_with("      ") && line.ends_with(std::string("  ") + library)) {
        columns.insert(line.size() - strlen(library));
        break;
      }
    }
  }
  EXPECT_EQ(columns.size(), 1u) << text.str();
}

// Each stack's estimate shows its interval, from the spread its samples estimate
// (sum of w(w-1) size^2); blocks sampled every time (weight 1) have none.
TEST(TextStacks, EstimatesShowTheIntervalTheirSamplesGive) {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, 10 * kS);
  m.profile.processes[p].weighted = true;
  uint32_t many = m.stack({"many"}), few = m.stack({"few"}), big = m.stack({"big"});
  uint64_t address = 0x10;
  for (int i = 0; i < 50; i++) m.alloc(p, many, kS, address += 0x10, 100, 1000);
  for (int i = 0; i < 4; i++) m.alloc(p, few, kS, address += 0x10, 100, 100);
  for (int i = 0; i < 4; i++) m.alloc(p, big, kS, address += 0x10, 1 << 20, 1);
  auto text_at = [&](double confidence) {
    ReportOptions options;
    options.gate.confidence = confidence;
    std::ostringstream text;
    write_text_report(build_report(m.profile, options), text);
    return text.str();
  };
  auto margin = [](double z, int samples, double weight, double size) {
    return format_bytes(z * std::sqrt(samples * weight * (weight - 1) * size * size));
  };
  const std::string t = text_at(0.95);
  EXPECT_NE(t.find(format_bytes(40000) + " \u00b1 " + margin(1.959964, 4, 100, 100) + "  "), std::string::npos) << t;
  EXPECT_NE(t.find(format_bytes(5e6) + " \u00b1 " + margin(1.959964, 50, 1000, 100) + "  "), std::string::npos) << t;
  EXPECT_NE(t.find("  4.00 MiB  "), std::string::npos) << t;  // no margin
  EXPECT_NE(t.find("95% interval"), std::string::npos) << t;
  const std::string wider = text_at(0.99);
  EXPECT_NE(wider.find(format_bytes(40000) + " \u00b1 " + margin(2.575829, 4, 100, 100) + "  "), std::string::npos)
      << wider;
  EXPECT_NE(wider.find("99% interval"), std::string::npos) << wider;
}

// What a process still held when its recording ended leaves the live series then:
// processes one after another do not add up (issue 39, item 2). The last process's
// blocks stay to the end, and the live view still sums each process's end.
TEST(Timeline, AProcesssBlocksLeaveTheLiveSeriesWhenItsRecordingEnds) {
  ProfileMaker m;
  uint32_t first = m.process(1, 0, 2 * kS), second = m.process(2, 3 * kS, 5 * kS);
  m.profile.processes[first].settings["live"] = m.profile.processes[second].settings["live"] = "true";
  uint32_t s = m.stack({"fill", "main"});
  m.alloc(first, s, 1 * kS, 0x10, 1000);
  m.alloc(second, s, 4 * kS, 0x10, 1000);
  m.profile.settle();
  auto t = timeline(m.profile.time_series(), true, 0, 5 * kS, 5);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->peak_live_bytes, 1000);
  EXPECT_EQ(t->live_bytes[2], 0);  // between the two
  EXPECT_EQ(t->live_bytes.back(), 1000);
  EXPECT_EQ(heap_view(m.profile).live.bytes, 2000);
}

TEST(Timeline, PeakLiveIsWhenTheMostWasHeldNotTheEnd) {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, 10 * kS);
  uint32_t s = m.stack({"fill", "main"});
  m.alloc(p, s, 1 * kS, 0x10, 1000);
  m.alloc(p, s, 2 * kS, 0x20, 3000);
  m.free(p, 5'500'000'000, 0x20);
  m.alloc(p, s, 6 * kS, 0x30, 500);
  auto t = timeline(m.profile.time_series(), true, 0, 10 * kS, 10);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->peak_live_bytes, 4000);
  EXPECT_EQ(t->peak_live_nanos, 2 * kS);
  EXPECT_EQ(t->live_bytes.back(), 1500);
  EXPECT_EQ(t->live_bytes[4], 4000);  // the free, at 5.5 s, is counted in step 5
  EXPECT_EQ(t->live_bytes[5], 1000);
  EXPECT_EQ(t->allocated_bytes[2], 3000);
  EXPECT_EQ(sparkline(t->live_bytes, 5).size(), 5 * 3u);  // UTF-8: 3 bytes a bar
  EXPECT_FALSE(timeline(m.profile.time_series(), true, 5, 5, 10));
  EXPECT_TRUE(timeline(m.profile.time_series(), false, 0, 10 * kS, 10)->live_bytes.empty());
}

TEST(Timeline, ThePeakIsWhenItWasReachedNotTheLastAllocationOfItsBin) {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, 10 * kS);
  uint32_t s = m.stack({"fill", "main"});
  m.alloc(p, s, 1 * kS, 0x10, 1000);
  m.alloc(p, s, 2 * kS, 0x20, 5000);  // the peak, 6000 bytes
  m.free(p, 2 * kS + 1000, 0x20);
  m.alloc(p, s, 2 * kS + 2000, 0x30, 10);  // within the same bin of the series
  m.alloc(p, s, 9 * kS, 0x40, 10);
  const auto& series = m.profile.time_series();
  auto bin_of = [&](int64_t t) { return (t - series.start_nanos()) / series.bin_nanos(); };
  ASSERT_EQ(bin_of(2 * kS), bin_of(2 * kS + 2000));
  auto peak = series.live_peak();
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->live_bytes, 6000);
  EXPECT_EQ(peak->time_nanos, 2 * kS);
  auto t = timeline(series, true, 0, 10 * kS, 10);
  EXPECT_EQ(t->peak_live_nanos, 2 * kS);
}

TEST(Lifetimes, CellsSumToTheAllocationsAndKeepWhenBlocksWereAllocatedAndFreed) {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, 100 * kS);
  uint32_t short_lived = m.stack({"parse", "main"}), kept = m.stack({"cache", "main"});
  uint32_t a = 0, b = 0;
  for (int i = 0; i < 100; i++) {
    int64_t t = i * kS;
    a = m.alloc(p, short_lived, t, 0x1000 + i, 100);
    m.free(p, t + kS / 2, 0x1000 + i);
    b = m.alloc(p, kept, t, 0x9000 + i, 10, 2);
    if (i % 2) m.free(p, t + 30 * kS, 0x9000 + i);  // freed 30 s later, or never
  }
  m.profile.settle();
  const auto& lifetimes = m.profile.lifetimes();
  const auto& clock = lifetimes.bins();
  Totals allocated[2], live[2];
  bool in_order = true;
  int64_t longest_life = 0;
  lifetimes.for_each([&](const profile::Lifetimes::Cell& c, const Totals& totals) {
    ASSERT_TRUE(c.allocation == a || c.allocation == b);
    int which = c.allocation == b;
    allocated[which].add(totals);
    if (c.freed_bin == profile::Lifetimes::kNotFreed) {
      live[which].add(totals);
      return;
    }
    in_order = in_order && c.freed_bin >= c.allocated_bin;
    longest_life = std::max(longest_life, clock.bin_start(c.freed_bin) - clock.bin_start(c.allocated_bin));
  });
  EXPECT_TRUE(in_order);
  EXPECT_EQ(allocated[0].bytes, m.profile.allocations()[a].allocated.bytes);
  EXPECT_EQ(allocated[1].count, m.profile.allocations()[b].allocated.count);
  EXPECT_EQ(live[0].samples, 0u);
  EXPECT_EQ(live[1].bytes, m.profile.allocations()[b].live.bytes);
  EXPECT_EQ(live[1].samples, 50u);
  EXPECT_LE(clock.start_nanos(), 0);
  EXPECT_GT(clock.bin_start(clock.count()), 129 * kS);  // the last free
  EXPECT_LE(clock.bin_nanos() * static_cast<int64_t>(clock.count()), 2 * 130 * kS);  // widened no more than needed
  EXPECT_NEAR(static_cast<double>(longest_life), 30.0 * kS, 2.0 * static_cast<double>(clock.bin_nanos()));
}

TEST(Timeline, SeriesBinsWidenToTakeEarlierAndLaterEvents) {
  profile::TimeSeries series;
  series.allocated(100 * kS, 10);
  series.became_live(100 * kS, 10, 0);
  series.allocated(1 * kS, 20);  // before the first: the series grows to the left
  series.became_live(1 * kS, 20, 0);
  series.allocated(900 * kS, 40);  // long after: bins widen
  series.freed(901 * kS, 10, 0);
  double allocated = 0, live = 0;
  for (const auto& b : series.bins()) {
    allocated += b.allocated;
    live += b.live_change;
  }
  EXPECT_EQ(allocated, 70);
  EXPECT_EQ(live, 20);
  EXPECT_LE(series.start_nanos(), 1 * kS);
  EXPECT_GE(series.start_nanos() + series.bin_nanos() * static_cast<int64_t>(profile::TimeSeries::kBins), 901 * kS);
}

// The peak's estimate has the variance of the blocks live at that moment, in the bin
// where it happened and once bins widened.
TEST(Timeline, ThePeakCarriesTheVarianceOfTheBlocksLiveThen) {
  profile::TimeSeries series;
  series.became_live(1 * kS, 100, 40);
  series.became_live(2 * kS, 50, 10);  // the peak: 150 bytes, variance 50
  series.freed(3 * kS, 100, 40);
  series.became_live(4 * kS, 60, 30);  // 110
  auto peak = series.live_peak();
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->live_bytes, 150);
  EXPECT_EQ(peak->live_bytes_variance, 50);
  EXPECT_EQ(peak->time_nanos, 2 * kS);
  series.became_live(100000 * kS, 1, 1);  // bins widen: the four above share one
  peak = series.live_peak();
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->live_bytes, 150);
  EXPECT_EQ(peak->live_bytes_variance, 50);
}

TEST(Timeline, DamagedFilesOverflowingValuesAndTimesStillDrawALine) {
  // Found by the report fuzzer: weights that overflow to infinity made a NaN bar level.
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> values = {inf, 1, std::nan(""), -inf, 2, inf};
  EXPECT_EQ(sparkline(values, 6).size(), 6 * 3u);
  EXPECT_EQ(sparkline(values, 2).size(), 2 * 3u);
  std::vector<double> huge = {std::numeric_limits<double>::max(), std::numeric_limits<double>::max()};
  EXPECT_EQ(sparkline(huge, 1), "\u2588");

  ProfileMaker m;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  uint32_t p = m.process(1, kMin, kMax);
  uint32_t s = m.stack({"fill", "main"});
  m.alloc(p, s, kMin, 0x10, 1000);
  m.alloc(p, s, kMax, 0x20, 3000);
  auto t = timeline(m.profile.time_series(), true, kMin, kMax, 10);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->allocated_bytes.front(), 1000);
  EXPECT_EQ(t->allocated_bytes.back(), 3000);
  EXPECT_EQ(t->peak_live_bytes, 4000);
}

TEST(Peek, CallersAndCalleesOfOneFunctionWithTheirBytes) {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, kS);
  m.alloc(p, m.stack({"parse", "load", "main"}), 1, 0x10, 100);
  m.alloc(p, m.stack({"strdup_copy", "parse", "reload", "main"}), 2, 0x20, 300);
  m.alloc(p, m.stack({"parse"}), 3, 0x30, 50);
  std::vector<uint32_t> all = {0, 1, 2};
  Aggregate a = aggregate(m.profile, all, false);
  auto rows = peek(m.profile, a.stacks, "^parse$", 10);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].total.bytes, 450);
  EXPECT_EQ(rows[0].self.bytes, 150);
  ASSERT_EQ(rows[0].callers.size(), 3u);  // reload, load, and the root of the third stack
  EXPECT_EQ(m.profile.frames()[rows[0].callers[0].frame].function, "reload");
  EXPECT_EQ(rows[0].callers[2].frame, kNoFrame);
  ASSERT_EQ(rows[0].callees.size(), 1u);
  EXPECT_EQ(rows[0].callees[0].totals.bytes, 300);
}

TEST(SampleFilter, TimeWindowKeepsItsSamplesAndLiveIsLiveAtItsEnd) {
  ProfileMaker m;
  uint32_t p = m.process(1, 100 * kS, 110 * kS);
  uint32_t s = m.stack({"f"});
  SampleFilter window;
  window.from_nanos = 2 * kS;
  window.to_nanos = 5 * kS;
  SampleSelection selection(window, {});
  m.profile.set_selector(&selection);
  m.alloc(p, s, 101 * kS, 0x10, 100);
  m.alloc(p, s, 103 * kS, 0x20, 200);
  m.free(p, 106 * kS, 0x20);
  m.alloc(p, s, 108 * kS, 0x30, 400);
  selection.finish(m.profile);
  ASSERT_EQ(m.profile.allocations().size(), 1u);
  EXPECT_EQ(m.profile.allocations()[0].allocated.bytes, 200);
  EXPECT_EQ(m.profile.allocations()[0].live.bytes, 200);  // its free came after --to
  EXPECT_EQ(m.profile.live_samples().size(), 1u);
  EXPECT_EQ(m.profile.processes[0].end_nanos - m.profile.processes[0].start_nanos, 3 * kS);
  EXPECT_EQ(filter_text(window), "from 2.0 s, to 5.0 s");
}

TEST(SampleFilter, FreesOfSamplesTurnedAwayFindThemInsteadOfWaiting) {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, 10 * kS);
  uint32_t s = m.stack({"f"});
  SampleFilter late;
  late.from_nanos = 5 * kS;
  SampleSelection selection(late, {});
  m.profile.set_selector(&selection);
  m.alloc(p, s, 1 * kS, 0x10, 100);  // before --from: not summed
  m.free(p, 6 * kS, 0x10);
  m.alloc(p, s, 7 * kS, 0x20, 200);
  selection.finish(m.profile);
  // A free left waiting would be held until the end: memory growing with the file.
  EXPECT_EQ(m.profile.unmatched_frees(), 0u);
  ASSERT_EQ(m.profile.live_samples().size(), 1u);
  EXPECT_EQ(m.profile.live_samples()[0].totals.bytes, 200);
}

TEST(SampleFilter, OffsetsTakeUnits) {
  EXPECT_EQ(parse_offset("10"), 10 * kS);
  EXPECT_EQ(parse_offset("1.5s"), 1'500'000'000);
  EXPECT_EQ(parse_offset("250ms"), 250'000'000);
  EXPECT_EQ(parse_offset("2m"), 120 * kS);
  EXPECT_FALSE(parse_offset("soon"));
  EXPECT_FALSE(parse_offset("-1s"));
  EXPECT_FALSE(parse_offset("5 s"));
}

TEST(SampleFilter, ANameThatMatchesNoThreadIsAnError) {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, kS);
  SampleFilter by_thread;
  by_thread.threads = {"worker-7"};
  SampleSelection unknown(by_thread, {});
  m.profile.set_selector(&unknown);
  EXPECT_EQ(m.alloc(p, m.stack({"f"}), 1, 0x10, 100), profile::Profile::kNotKept);
  EXPECT_THROW(unknown.finish(m.profile), ReportError);

  ProfileMaker named;
  p = named.process(1, 0, kS);
  by_thread.threads = {"main"};
  SampleSelection main_thread(by_thread, {});
  named.profile.set_selector(&main_thread);
  named.alloc(p, named.stack({"f"}), 1, 0x10, 100);
  main_thread.finish(named.profile);
  EXPECT_EQ(named.profile.allocations().size(), 1u);
}

TEST(SampleFilter, IncludeAndExcludeMatchStacksAsTheyAreRead) {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, kS);
  SampleFilter through;
  through.include = {"^parse"};
  through.exclude = {"test_"};
  SampleSelection selection(through, {});
  m.profile.set_selector(&selection);
  m.alloc(p, m.stack({"strdup", "parse_config", "main"}), 1, 0x10, 100);
  m.alloc(p, m.stack({"strdup", "load", "main"}), 2, 0x20, 200);
  m.alloc(p, m.stack({"parse_config", "test_main"}), 3, 0x30, 400);
  selection.finish(m.profile);
  ASSERT_EQ(m.profile.allocations().size(), 1u);
  EXPECT_EQ(m.profile.allocations()[0].allocated.bytes, 100);
  double series = 0;
  for (const auto& b : m.profile.time_series().bins()) series += b.allocated;
  EXPECT_EQ(series, 100);  // the timeline follows the filter
}

// A recording made before nmprof counted what reallocs add, diffed with a later one:
// its reallocs counted their whole new size, which would read as a drop.
TEST(Diff, RecordingsThatCountReallocsDifferentlyAreSaidToCompareBadly) {
  auto recording = [](std::optional<bool> counts_growth) {
    ProfileMaker m;
    uint32_t p = m.process(1, 0, 10 * kS);
    m.profile.processes[p].counts_realloc_growth = counts_growth;
    m.alloc(p, m.stack({"grow", "main"}), kS, 0x1000, 4096);
    return m.profile;
  };
  profile::Profile before = recording(false), after = recording(true), foreign = recording(std::nullopt);
  Diff old_base = diff_profiles(before, after, false);
  ASSERT_EQ(old_base.warnings.size(), 1u);
  EXPECT_EQ(old_base.warnings[0].rfind("the base recording counts each realloc at its whole new size", 0), 0u)
      << old_base.warnings[0];
  Diff old_new = diff_profiles(after, before, false);
  ASSERT_EQ(old_new.warnings.size(), 1u);
  EXPECT_EQ(old_new.warnings[0].rfind("this recording counts each realloc at its whole new size", 0), 0u);
  EXPECT_TRUE(diff_profiles(after, after, false).warnings.empty());
  EXPECT_TRUE(diff_profiles(before, before, false).warnings.empty());
  EXPECT_TRUE(diff_profiles(foreign, after, false).warnings.empty());  // no profiler.Malloc: nothing to say
}

}  // namespace
}  // namespace nmprof::report
