// `nmprof report` and the end-of-run summary on recordings written like the agent's:
// text layout, JSON content (parsed by python3), error messages and exit codes.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "cli/report/report_command.h"
#include "formats/jfr/nmprof_schema.h"
#include "profile/jfr_profile.h"
#include "profile/stack_simplification.h"
#include "tests/jfr_reader/test_recordings.h"

namespace nmprof::report {
namespace {

using nmprof::testing::kTestClock;
using nmprof::testing::NativeFrame;
using nmprof::testing::NmprofChunk;

const int64_t kStart = kTestClock.start_ticks;
constexpr int64_t kMs = 1'000'000;
constexpr float kInterval = 524288;

int open_new(const std::string& path) { return ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644); }

std::vector<NativeFrame> deep_parser_stack() {
  std::vector<NativeFrame> frames = {
      {"operator new[](unsigned long)", "libstdc++.so.6"},
      {"parse_request(char const*, unsigned long, std::map<std::string, int>&)", "server"}};
  for (int i = 0; i < 10; i++)
    frames.push_back({"layer" + std::to_string(i) + "()", "libmiddleware-with-a-long-name.so.1"});
  frames.push_back({"start_thread", "libc.so.6"});
  return frames;
}

// Two processes. The server fills a cache at start (never freed) and parses
// requests all along (freed, except the last two); its child does a little work.
std::string write_example(const std::string& name, bool with_frees = true) {
  std::string path = nmprof::testing::temp_path(name);
  int fd = open_new(path);
  {
    NmprofChunk server(fd, 100);
    server.process(1, "./server --port 8080");
    server.setting("nativemem", "524288");
    server.setting("live", with_frees ? "true" : "false");
    uint64_t main = server.thread("server", 100);
    uint64_t cache = server.stack(
        {{"operator new(unsigned long)", "libstdc++.so.6"},
         {"std::vector<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, "
          "std::map<int, int, std::less<int>, std::allocator<std::pair<int const, int> > > > >::_M_realloc_insert("
          "unsigned long)",
          "libstdc++.so.6"},
         {"Cache::fill(unsigned long)", "server"},
         {"main", "server"}});
    uint64_t parse = server.stack(deep_parser_stack(), true);
    for (int i = 0; i < 5; i++) server.malloc(kStart + i * kMs, main, cache, 0x10000 + i * 0x1000, 1 << 20, 1);
    for (int i = 0; i < 20; i++) {
      int64_t t = kStart + (50 + 45 * i) * kMs;
      server.malloc(t, main, parse, 0x90000 + i * 0x100, 1000, kInterval / 1000);
      if (with_frees && i < 18) server.free(t + kMs, main, 0x90000 + i * 0x100);
    }
    server.statistics(kStart + 999 * kMs,
                      {{"samples", 25}, {"lostSamples", 3}, {"agentMemory", 3 << 20}, {"untrackedSamples", 4},
                       {"liveBytes", 6 << 20}});
    server.append(kStart + 1000 * kMs);
  }
  {
    NmprofChunk child(fd, 101);
    child.process(100, "./server --worker");
    child.setting("nativemem", "524288");
    uint64_t worker = child.thread("worker", 101);
    uint64_t work = child.stack({{"malloc", "libc.so.6"}, {"child_work", "server"}, {"main", "server"}});
    for (int i = 0; i < 3; i++) child.malloc(kStart + (100 + i) * kMs, worker, work, 0x500 + i, 100, kInterval / 100);
    child.append(kStart + 200 * kMs);
  }
  close(fd);
  return path;
}

struct Output {
  int status;
  std::string out, err;
};

Output report(const std::string& file, ReportOptions options = {}) {
  options.files = {file};
  std::ostringstream out, err;
  int status = run_report(options, out, err);
  return {status, out.str(), err.str()};
}

void expect_fits(const std::string& text, size_t width = 100) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    // Columns, not bytes: sparklines are UTF-8.
    size_t columns = std::count_if(line.begin(), line.end(), [](char c) { return (c & 0xC0) != 0x80; });
    EXPECT_LE(columns, width) << line;
  }
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Bytes the example allocates and leaves live, by construction.
constexpr double kCacheBytes = 5 << 20;
constexpr double kParseBytes = 20 * kInterval;
constexpr double kChildBytes = 3 * kInterval;
constexpr double kLiveBytes = kCacheBytes + 2 * kInterval + kChildBytes;

TEST(Report, TextShowsTotalsStacksFunctionsAndALiveSection) {
  ReportOptions options;
  options.top = 20;                     // every function, down to main with no self bytes
  options.stacks.fold_defaults = false;  // --keep-frames: long C++ names to shorten
  Output r = report(write_example("text.jfr"), options);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  expect_fits(r.out);
  const std::string& t = r.out;
  EXPECT_TRUE(contains(t, "(2 processes)")) << t;
  EXPECT_TRUE(contains(t, "one sample per 512 KiB allocated")) << t;
  // Sampled at 512 KiB: every estimate has its interval.
  EXPECT_TRUE(contains(t, "~16.5 MiB \u00b1 ")) << t;
  EXPECT_TRUE(contains(t, " MiB in ~26,219 allocations (28 samples)")) << t;
  EXPECT_TRUE(contains(t, "./server --worker")) << t;
  EXPECT_TRUE(contains(t, "warning: 3 samples were lost")) << t;
  EXPECT_TRUE(contains(t, "warning: 4 samples were not tracked (the tracking table was full, raise --maxtracked)")) << t;
  // The agent's counters in words, what other lines say left out.
  EXPECT_TRUE(contains(t, "\nAgent       25 samples (3 lost), 3.00 MiB of memory\n")) << t;
  // The parser stack first (10 MiB), innermost frame first, operator new[] kept.
  size_t parse = t.find("#1  10.0 MiB \u00b1 ");
  EXPECT_TRUE(contains(t, " MiB  60.6%  ~10,486 allocations  20 samples  pid 100")) << t;
  ASSERT_NE(parse, std::string::npos) << t;
  EXPECT_TRUE(contains(t.substr(parse), "\n      operator new[](unsigned long)  ")) << t;
  EXPECT_TRUE(contains(t.substr(parse), "\n      parse_request(char const*, unsigned long, std::map<...>&)  ")) << t;
  EXPECT_TRUE(contains(t, "... 5 more frames (--depth 13 shows them)")) << t;
  EXPECT_TRUE(contains(t, "(truncated at the profiler's stack depth limit)")) << t;
  EXPECT_TRUE(contains(t, "std::vector<...>::_M_realloc_insert(unsigned long)")) << t;
  // Functions: self and total of the parser's operator new[], 100% total for main.
  EXPECT_TRUE(contains(t, "  10.0 MiB   60.6%   10,486    10.0 MiB   60.6%  operator new[](")) << t;
  EXPECT_TRUE(contains(t, "       0 B    0.0%        0    6.50 MiB   39.4%  main [server]")) << t;
  // Live: the cache, two parses and the child's work.
  // The tracking table overflowed: bounds, from the agent's tracked count to all unfreed samples.
  EXPECT_TRUE(contains(t, "Live at the end of the recording: between ~6.00 MiB and ~7.50 MiB")) << t;
  EXPECT_TRUE(contains(t, "18 frees matched sampled blocks, 0 matched none")) << t;
  EXPECT_TRUE(contains(t, "   66.7%  operator new < std::vector<...>::_M_realloc_insert < ")) << t;
  EXPECT_TRUE(contains(t, "more: nmprof report " + write_example("text.jfr") + " --live")) << t;
}

TEST(Report, LiveViewRanksWhatIsLeftAndSaysHowOldItIs) {
  ReportOptions options;
  options.live = true;
  options.top = 2;
  Output r = report(write_example("live.jfr"), options);
  ASSERT_EQ(r.status, 0) << r.err;
  expect_fits(r.out);
  const std::string& t = r.out;
  EXPECT_TRUE(contains(t, "Top 2 stacks by live bytes (of 3; they hold 86.7%)")) << t;
  // The cache: allocated in the first 5 ms of a 1 s recording.
  EXPECT_TRUE(contains(t, "#1  5.00 MiB  66.7%  ~5 blocks  5 samples  age median 998 ms, oldest 1.0 s")) << t;
  EXPECT_TRUE(contains(t, "Top 2 functions by live self bytes (of 15)")) << t;
  EXPECT_FALSE(contains(t, "Live at the end of the recording:")) << "the short section is for allocation reports";
}

TEST(Report, ByFunctionLeavesOutTheStacks) {
  ReportOptions options;
  options.by = ReportOptions::By::Function;
  Output r = report(write_example("by-function.jfr"), options);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(contains(r.out, "stacks by allocated bytes")) << r.out;
  EXPECT_TRUE(contains(r.out, "functions by allocated self bytes")) << r.out;
}

// Fields of the JSON report as python3 reads them, one "name value" per line,
// numbers to six significant digits.
std::string json_fields(const std::string& json_path) {
  std::string script = nmprof::testing::temp_path("fields.py");
  std::ofstream(script) << R"(import json, sys
r = json.load(open(sys.argv[1]))
def show(name, v):
    print(name, ('%.6g' % v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v)
for k in ['schema', 'schema_version', 'view', 'source', 'estimates', 'sampling_interval_bytes']: show(k, r[k])
show('allocated.samples', r['allocated']['samples'])
show('allocated.bytes', r['allocated']['estimated_bytes'])
show('live.bytes', r['live']['estimated_bytes'])
show('live.matched_frees', r['live']['matched_frees'])
show('live.top_stacks', len(r['live']['top_stacks']))
show('live.oldest', r['live']['age']['oldest_seconds'])
show('pids', ' '.join(str(p['pid']) for p in r['processes']))
show('settings.nativemem', r['processes'][0]['settings']['nativemem'])
show('lost_samples', r['statistics']['lost_samples'])
s = r['stacks'][0]
show('stack.bytes', s['estimated_bytes'])
show('stack.share', s['share'])
show('stack.truncated', s['truncated'])
show('stack.frames', len(s['frames']))
show('stack.top', s['frames'][0]['function'] + ' | ' + s['frames'][0]['container'] + ' | ' + s['frames'][0]['kind'])
show('stack.line', s['frames'][0]['line'])
f = [f for f in r['functions'] if f['function'] == 'main'][0]
show('main.self', f['self']['estimated_bytes'])
show('main.total', f['total']['estimated_bytes'])
show('main.total_share', f['total_share'])
)";
  std::string out_path = json_path + ".fields";
  int status = std::system(("python3 " + script + " " + json_path + " > " + out_path).c_str());
  EXPECT_EQ(status, 0) << "python3 could not read the JSON report";
  std::ifstream in(out_path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string g(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

TEST(Report, JsonCarriesTheSameNumbers) {
  ReportOptions options;
  options.format = ReportOptions::Format::Json;
  options.top = 20;
  Output r = report(write_example("json.jfr"), options);
  ASSERT_EQ(r.status, 0) << r.err;
  std::string json_path = nmprof::testing::temp_path("report.json");
  std::ofstream(json_path) << r.out;
  const double total = kCacheBytes + kParseBytes + kChildBytes;
  std::string expected =
      "schema nmprof-report\nschema_version 2\nview allocated\nsource native\nestimates True\n"
      "sampling_interval_bytes 524288\n"
      "allocated.samples 28\nallocated.bytes " +
      g(total) +
      "\n"
      "live.bytes " +
      g(kLiveBytes) +
      "\nlive.matched_frees 18\nlive.top_stacks 3\nlive.oldest 1\n"
      "pids 100 101\nsettings.nativemem 524288\nlost_samples 3\n"
      "stack.bytes " +
      g(kParseBytes) + "\nstack.share " + g(kParseBytes / total) +
      "\n"
      "stack.truncated True\nstack.frames 12\n"
      "stack.top parse_request(char const*, unsigned long, std::map<std::string, int>&) | server | native\n"
      "stack.line None\n"
      "main.self 0\nmain.total " +
      g(kCacheBytes + kChildBytes) +
      "\n"
      "main.total_share " +
      g((kCacheBytes + kChildBytes) / total) + "\n";
  EXPECT_EQ(json_fields(json_path), expected) << r.out;
}

TEST(Report, WarnsThatUnweightedSamplesAreNotEstimates) {
  profile::Profile p;
  p.processes.push_back({});
  p.processes[0].weighted = false;
  profile::Sample s;
  s.size = 100;
  s.stack = p.add_stack({});
  p.add_allocation(s);
  Report r = build_report(p, {});
  EXPECT_FALSE(r.estimates);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_TRUE(contains(r.notes[0], "totals are sums of sampled sizes, not estimates")) << r.notes[0];
}

TEST(Report, SaysThatJavaHeapSamplesAreLeftOutOfANativeView) {
  // report app.jfr jdk.jfr: the JDK's samples were left out without a word.
  profile::Profile p;
  p.processes.resize(2);
  profile::Sample native, java;
  native.size = 100;
  native.address = 0x1000;
  native.stack = p.add_stack({});
  p.add_allocation(native);
  java.process = 1;
  java.size = 5000;
  java.stack = native.stack;
  java.source = profile::AllocationSource::JavaHeap;
  p.add_allocation(java);
  Report r = build_report(p, {});
  ASSERT_EQ(r.source, profile::AllocationSource::Native);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_TRUE(contains(r.notes[0], "jdk.ObjectAllocationSample) are left out of this native view")) << r.notes[0];
}

// A recording of `true` that sampled nothing; its statistics say why it stopped
// growing, when `stopped` is given.
std::string recording_without_samples(const char* name, std::optional<int64_t> stopped = std::nullopt) {
  std::string path = nmprof::testing::temp_path(name);
  int fd = open_new(path);
  NmprofChunk chunk(fd, 5);
  chunk.process(1, "true");
  chunk.setting("nativemem", "524288");
  chunk.setting("live", "true");
  if (stopped) chunk.statistics(kStart + 1, {{"stoppedGrowing", *stopped}});
  chunk.append(kStart + 1);
  close(fd);
  return path;
}

TEST(Report, SaysNothingWasSampledInARecordingWithoutSamples) {
  std::string empty = recording_without_samples("no-samples.jfr");
  for (bool live : {false, true}) {
    ReportOptions options;
    options.live = live;
    options.wide = true;
    Output text = report(empty, options);
    EXPECT_EQ(text.status, 0) << text.err;
    EXPECT_TRUE(contains(text.out, "Command     true\n")) << text.out;
    EXPECT_TRUE(contains(text.out, "\nNothing was sampled: the program allocated too little for the sampling interval "
                                   "(512 KiB); a smaller --nativemem samples more.\n"))
        << text.out;
    EXPECT_FALSE(contains(text.out, "Live at the end")) << text.out;
  }
}

// Hostile testing of issue 22: a target killed by SIGKILL during `attach --duration`
// left a recording without samples that ends before its process did; the summary said
// the program allocated too little, which nothing showed.
TEST(Report, ARecordingCutShortWithoutSamplesDoesNotSayTheProgramAllocatedTooLittle) {
  std::string cut = recording_without_samples("cut-short.jfr", nmprof::jfr::schema::kBeforeTheEnd);
  ReportOptions options;
  options.wide = true;
  Output text = report(cut, options);
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_TRUE(contains(text.out, "\nNothing was sampled before the recording stopped (it ends before its process "
                                 "did: the process was killed"))
      << text.out;
  EXPECT_FALSE(contains(text.out, "allocated too little")) << text.out;
}

TEST(Report, FailsWithOneLineForFilesItCannotReport) {
  Output missing = report("/nonexistent/x.jfr");
  EXPECT_EQ(missing.status, 1);
  EXPECT_EQ(missing.err, "nmprof report: cannot open /nonexistent/x.jfr: No such file or directory\n");
  EXPECT_EQ(missing.out, "");

  std::string text = nmprof::testing::temp_path("notes.txt");
  std::ofstream(text) << "hello, not a recording\n";
  Output not_jfr = report(text);
  EXPECT_EQ(not_jfr.status, 1);
  EXPECT_EQ(not_jfr.err, "nmprof report: " + text + ": not a JFR file (no \"FLR\" magic)\n");

  std::string empty = nmprof::testing::temp_path("no-events.jfr");  // not even a process said what it is
  int fd = open_new(empty);
  NmprofChunk chunk(fd, 5);
  chunk.append(kStart + 1);
  close(fd);
  Output no_samples = report(empty);
  EXPECT_EQ(no_samples.status, 1);
  EXPECT_EQ(no_samples.err,
            "nmprof report: " + empty + ": no allocation events (profiler.Malloc or jdk.ObjectAllocationSample)\n");

  ReportOptions live;
  live.live = true;
  std::string no_frees = write_example("no-frees.jfr", false);
  Output no_live = report(no_frees, live);
  EXPECT_EQ(no_live.status, 1);
  EXPECT_TRUE(contains(no_live.err, "no live data")) << no_live.err;
}

TEST(Report, ATruncatedFileReportsWhatItHoldsWithAWarning) {
  std::string path = write_example("cut.jfr");
  auto bytes = nmprof::testing::read_file(path);
  bytes.resize(bytes.size() - 10);  // into the child's chunk
  std::string cut = nmprof::testing::temp_path("cut-short.jfr");
  nmprof::testing::write_file(cut, bytes);
  Output r = report(cut);
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(contains(r.err, "nmprof report: warning: " + cut + ": chunk 2 ")) << r.err;
  EXPECT_TRUE(contains(r.err, "truncated")) << r.err;
  EXPECT_TRUE(contains(r.out, "Top 3 stacks by allocated bytes")) << r.out;
}

// The recording as run and attach summarise it: read, with the default stack folding.
profile::Profile as_delivered(const std::string& path) {
  profile::Profile p = profile::read_profile(path);
  profile::simplify_stacks(p, {});
  return p;
}

TEST(RunSummary, LeadsWithLiveMemory) {
  std::string path = write_example("summary.jfr");
  std::ostringstream out;
  print_run_summary(as_delivered(path), path, path, 3, out);
  const std::string s = out.str();
  expect_fits(s);
  EXPECT_EQ(s.find("nmprof: profile written to " + path + " (2 processes)\n"), 0u) << s;
  size_t live = s.find("  live at exit: between ~6.00 MiB and ~7.50 MiB (the tracking table overflowed)\n");
  size_t allocated = s.find("  allocated:    ~16.5 MiB \u00b1 ");
  EXPECT_TRUE(contains(s, " MiB in ~26,219 allocations (28 samples)\n")) << s;
  ASSERT_NE(live, std::string::npos) << s;
  ASSERT_NE(allocated, std::string::npos) << s;
  EXPECT_LT(live, allocated);
  // A stack sampled every time has no interval; its neighbours' column is left blank.
  EXPECT_TRUE(contains(s, "top stacks by live bytes:\n      5.00 MiB    ")) << s;
  EXPECT_TRUE(contains(s, "    66.7%  Cache::fill < main\n")) << s;
  // Folded as run and attach print it: the library's internals give way to their caller.
  std::ostringstream folded;
  profile::Profile simplified = profile::read_profile(path);
  profile::simplify_stacks(simplified, {});
  print_run_summary(simplified, path, path, 3, folded);
  EXPECT_TRUE(contains(folded.str(), "    66.7%  Cache::fill < main")) << folded.str();
  EXPECT_TRUE(contains(s, "  more: nmprof report " + path + " --live\n")) << s;
}

TEST(Report, SaysSoWhenNothingIsLeft) {
  std::string path = nmprof::testing::temp_path("all-freed.jfr");
  int fd = open_new(path);
  NmprofChunk chunk(fd, 7);
  uint64_t t = chunk.thread("main", 7), st = chunk.stack({{"f", "app"}});
  chunk.malloc(kStart + 1, t, st, 0x10, 100, 1);
  chunk.free(kStart + 2, t, 0x10);
  chunk.append(kStart + 3);
  close(fd);
  ReportOptions live;
  live.live = true;
  Output r = report(path, live);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "No stacks: nothing is live at the end of the recording")) << r.out;
  std::ostringstream summary;
  print_run_summary(as_delivered(path), path, path, 3, summary);
  EXPECT_FALSE(contains(summary.str(), "live at exit")) << summary.str();
  EXPECT_TRUE(contains(summary.str(),
                       "  allocated:    ~100 B in ~1 allocation (1 sample)\n  peak live:    ~100 B at 0 us into the "
                       "run\n  top stacks by allocated bytes:\n         100 B  100.0%  f\n"))
      << summary.str();
}

TEST(RunSummary, ShowsAllocationsWhenNothingIsTracked) {
  std::string path = write_example("summary-nolive.jfr", false);
  std::ostringstream out;
  print_run_summary(as_delivered(path), path, path, 2, out);
  const std::string s = out.str();
  EXPECT_FALSE(contains(s, "live at exit")) << s;
  // Each stack's interval in a column of its own.
  EXPECT_TRUE(contains(s, "top stacks by allocated bytes:\n      10.0 MiB \u00b1 ")) << s;
  EXPECT_TRUE(contains(s, " MiB   60.6%  parse_request < layer0 < layer1")) << s;
  size_t first = s.find("   60.6%"), second = s.find("   30.3%");
  ASSERT_NE(second, std::string::npos) << s;
  EXPECT_EQ(first - s.rfind('\n', first), second - s.rfind('\n', second) + 1) << s;  // "±": one more byte
  EXPECT_TRUE(contains(s, "  more: nmprof report " + path + "\n")) << s;
}

}  // namespace
}  // namespace nmprof::report
