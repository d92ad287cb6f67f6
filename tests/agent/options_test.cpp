#include "agent/options.h"

#include <gtest/gtest.h>

namespace nmprof {
namespace {

TEST(ParseSize, UnitsAreBinaryAndCaseInsensitive) {
  EXPECT_EQ(parse_size("0"), 0u);
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("512k"), 512u * 1024);
  EXPECT_EQ(parse_size("512K"), 512u * 1024);
  EXPECT_EQ(parse_size("1m"), 1u << 20);
  EXPECT_EQ(parse_size("1MiB"), 1u << 20);
  EXPECT_EQ(parse_size("2g"), 2ull << 30);
  EXPECT_EQ(parse_size("3kb"), 3u * 1024);
  EXPECT_EQ(parse_size("7b"), 7u);
}

TEST(ParseSize, RejectsGarbageNegativesAndOverflow) {
  for (const char* bad : {"", "k", "-1", "1.5m", "12q", "1 m", "1mm", "99999999999999999999", "16777216t", "0x10"})
    EXPECT_FALSE(parse_size(bad).has_value()) << bad;
}

TEST(FormatSize, RoundTripsThroughParse) {
  for (uint64_t v : {0ull, 1000ull, 1024ull, 524288ull, 1048576ull, 3ull << 30, 1500ull})
    EXPECT_EQ(parse_size(format_size(v)), v) << format_size(v);
  EXPECT_EQ(format_size(524288), "512k");
  EXPECT_EQ(format_size(1 << 20), "1m");
}

TEST(AgentOptions, ParsesEveryOption) {
  AgentOptions o;
  EXPECT_FALSE(parse_agent_options("nativemem=1m,file=/tmp/x.jfr,stackdepth=32", o));
  EXPECT_EQ(o.interval, 1u << 20);
  EXPECT_EQ(o.file, "/tmp/x.jfr");
  EXPECT_EQ(o.stack_depth, 32u);
}

TEST(AgentOptions, KeepsDefaultsForWhatIsNotGiven) {
  AgentOptions o;
  EXPECT_FALSE(parse_agent_options("", o));
  EXPECT_EQ(o.interval, kDefaultInterval);
  EXPECT_EQ(o.stack_depth, kDefaultStackDepth);
  EXPECT_TRUE(o.file.empty());
}

// Found by fuzz/agent_options_fuzzer (fuzz/regressions/agent_options): a path's
// trailing comma was dropped, so the agent wrote elsewhere than the CLI had checked.
TEST(AgentOptions, AFilePathKeepsItsTrailingCommas) {
  for (const char* path : {"/tmp/a,", "/tmp/a,,", "/tmp/a,b,"}) {
    AgentOptions o;
    EXPECT_FALSE(parse_agent_options(std::string("file=") + path, o));
    EXPECT_EQ(o.file, path);
    AgentOptions again;
    EXPECT_FALSE(parse_agent_options(format_agent_options(o), again));
    EXPECT_EQ(again.file, path);
  }
  AgentOptions o;
  EXPECT_FALSE(parse_agent_options("nativemem=1m,", o));
  EXPECT_EQ(o.interval, 1u << 20);
}

TEST(AgentOptions, ErrorsNameTheBadOption) {
  AgentOptions o;
  auto error = parse_agent_options("nativemem=12q", o);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("12q"), std::string::npos);
  error = parse_agent_options("colour=blue", o);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("colour"), std::string::npos);
  EXPECT_TRUE(parse_agent_options("stackdepth=0", o));
  EXPECT_TRUE(parse_agent_options("stackdepth=100000", o));
  EXPECT_TRUE(parse_agent_options("file", o));
}

TEST(AgentOptions, LiveTrackingOptions) {
  AgentOptions o;
  EXPECT_TRUE(o.live);
  EXPECT_FALSE(parse_agent_options("live=false,maxtracked=1000", o));
  EXPECT_FALSE(o.live);
  EXPECT_EQ(o.max_tracked, 1000u);
  EXPECT_TRUE(parse_agent_options("live=maybe", o));
  EXPECT_TRUE(parse_agent_options("maxtracked=0", o));
  EXPECT_TRUE(parse_agent_options("maxtracked=12x", o));
}

TEST(AgentOptions, AFileGivenLastMayContainCommas) {
  AgentOptions o;
  EXPECT_FALSE(parse_agent_options("nativemem=1m,file=/tmp/a,b.jfr", o));
  EXPECT_EQ(o.file, "/tmp/a,b.jfr");
  EXPECT_EQ(o.interval, 1u << 20);
}

TEST(AgentOptions, FormatParsesBack) {
  AgentOptions o;
  o.interval = 256 * 1024;
  o.file = "/out/%p.jfr";
  o.stack_depth = 40;
  o.live = false;
  o.max_tracked = 77;
  o.file = "/out/a,b-%p.jfr";
  AgentOptions back;
  EXPECT_FALSE(parse_agent_options(format_agent_options(o), back));
  EXPECT_EQ(back.interval, o.interval);
  EXPECT_EQ(back.file, o.file);
  EXPECT_EQ(back.stack_depth, o.stack_depth);
  EXPECT_EQ(back.live, o.live);
  EXPECT_EQ(back.max_tracked, o.max_tracked);
}

TEST(PathTemplate, ExpandsPidTimeAndPercent) {
  EXPECT_EQ(expand_path_template("out-%p.jfr", 1234, ""), "out-1234.jfr");
  EXPECT_EQ(expand_path_template("100%%-%p", 7, ""), "100%-7");
  EXPECT_EQ(expand_path_template("plain.jfr", 7, ""), "plain.jfr");
  EXPECT_EQ(expand_path_template("a-%t-%%t", 7, "T"), "a-T-%t");
  std::string t = local_time_text(86400 * 365);
  EXPECT_EQ(t.size(), 15u);  // yyyymmdd-hhmmss
  EXPECT_EQ(t[8], '-');
}

}  // namespace
}  // namespace nmprof
