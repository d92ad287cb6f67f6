#include "protocol/agent_options.h"

#include <gtest/gtest.h>

#include "formats/jfr/nmprof_schema.h"

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

TEST(AgentOptions, TheExitWatchIsAskedFor) {
  AgentOptions o;
  EXPECT_FALSE(o.exit_watch);
  EXPECT_EQ(format_agent_options(o).find("exitwatch"), std::string::npos);
  EXPECT_FALSE(parse_agent_options("exitwatch=true", o));
  EXPECT_TRUE(o.exit_watch);
  AgentOptions back;
  EXPECT_FALSE(parse_agent_options(format_agent_options(o), back));
  EXPECT_TRUE(back.exit_watch);
  EXPECT_FALSE(parse_agent_options("exitwatch=false", back));
  EXPECT_FALSE(back.exit_watch);
  auto error = parse_agent_options("exitwatch=yes", o);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("true or false"), std::string::npos) << *error;
}

// Recording every allocation tracks every live block: the default cap is raised
// there (ordinary programs hold half a million), never over what the user gave.
TEST(AgentOptions, TheTrackedBlocksCapFollowsTheInterval) {
  AgentOptions o;
  EXPECT_EQ(tracked_blocks_cap(o), kDefaultMaxTracked);
  ASSERT_FALSE(parse_agent_options("nativemem=0", o));
  EXPECT_EQ(tracked_blocks_cap(o), kEveryAllocationMaxTracked);
  EXPECT_GT(kEveryAllocationMaxTracked, 507000u);  // issue 39's program
  EXPECT_EQ(format_agent_options(o), "nativemem=0");
  ASSERT_FALSE(parse_agent_options("maxtracked=1000", o));
  EXPECT_EQ(tracked_blocks_cap(o), 1000u);
  AgentOptions back;
  ASSERT_FALSE(parse_agent_options(format_agent_options(o), back));
  EXPECT_EQ(tracked_blocks_cap(back), 1000u);
}

TEST(AgentOptions, MaxSizeIsASizeOfAtLeast64k) {
  AgentOptions o;
  EXPECT_EQ(o.max_size, 0u);
  EXPECT_FALSE(parse_agent_options("maxsize=100m", o));
  EXPECT_EQ(o.max_size, 100u << 20);
  EXPECT_FALSE(parse_agent_options("maxsize=0", o));
  EXPECT_EQ(o.max_size, 0u);
  auto error = parse_agent_options("maxsize=1k", o);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("at least 64k"), std::string::npos) << *error;
  EXPECT_TRUE(parse_agent_options("maxsize=lots", o));
}

TEST(AgentOptions, RateIsACountOfSamplesPerSecond) {
  AgentOptions o;
  EXPECT_EQ(o.rate, 0u);
  EXPECT_FALSE(parse_agent_options("rate=100", o));
  EXPECT_EQ(o.rate, 100u);
  auto error = parse_agent_options("rate=fast", o);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("fast"), std::string::npos);
  EXPECT_TRUE(parse_agent_options("rate=-1", o));
  EXPECT_TRUE(parse_agent_options("rate=1000001", o));
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
  o.rate = 250;
  o.max_size = 3 << 20;
  o.file = "/out/a,b-%p.jfr";
  o.output = "run's out,1.jfr";
  o.tags = {{"service", "shop"}, {"build", "a=b"}, {"teams", "a,b"}};
  o.context_attributes = {"route", "tenant_id"};
  AgentOptions back;
  EXPECT_FALSE(parse_agent_options(format_agent_options(o), back));
  EXPECT_EQ(back.interval, o.interval);
  EXPECT_EQ(back.file, o.file);
  EXPECT_EQ(back.output, o.output);
  EXPECT_EQ(back.stack_depth, o.stack_depth);
  EXPECT_EQ(back.live, o.live);
  EXPECT_EQ(back.max_tracked, o.max_tracked);
  EXPECT_EQ(back.rate, o.rate);
  EXPECT_EQ(back.max_size, o.max_size);
  EXPECT_EQ(back.tags, o.tags);
  EXPECT_EQ(back.context_attributes, o.context_attributes);
}

TEST(AgentOptions, BadTagsAndAttributesAreRefused) {
  AgentOptions o;
  EXPECT_EQ(*parse_agent_options("tag=service", o), "bad tag 'service' (KEY=VALUE, e.g. service=checkout)");
  EXPECT_TRUE(parse_agent_options("tag==x", o));
  EXPECT_TRUE(parse_agent_options("attributes=", o));
  EXPECT_TRUE(parse_agent_options("attributes=a;;b", o));
  EXPECT_TRUE(parse_agent_options("attributes=1st", o));
  EXPECT_TRUE(parse_agent_options("attributes=spanId", o));
  EXPECT_TRUE(parse_agent_options("attributes=a;b;c;d;e;f;g;h;i", o));
  EXPECT_FALSE(parse_agent_options("attributes=a;b;c;d;e;f;g;h", o));
  EXPECT_EQ(o.context_attributes.size(), kMaxContextAttributes);
  EXPECT_TRUE(parse_agent_options("attributes=" + std::string(kMaxAttributeNameLength + 1, 'x'), o));
  EXPECT_FALSE(parse_agent_options("attributes=" + std::string(kMaxAttributeNameLength, 'x'), o));
}

// Every field profiler.Malloc has without attributes, read from the metadata the
// recording is written with: `allocator` was accepted (a second hand-written list
// had missed it), and the event got two fields of one name.
TEST(AgentOptions, AttributesNamedAsAMallocFieldAreRefused) {
  const jfr::TypeDecl* malloc_event = jfr::schema::nmprof_metadata().find(jfr::schema::kMallocName);
  ASSERT_NE(malloc_event, nullptr);
  ASSERT_FALSE(malloc_event->fields.empty());
  for (const jfr::FieldDecl& field : malloc_event->fields) {
    AgentOptions o;
    auto error = parse_agent_options("attributes=route;" + field.name, o);
    ASSERT_TRUE(error) << field.name;
    EXPECT_EQ(*error, "context attribute name '" + field.name + "' is a field of profiler.Malloc");
  }
  AgentOptions o;
  EXPECT_FALSE(parse_agent_options("attributes=Allocator;sizes", o));
}

TEST(AgentOptions, EmptyTagValueIsAllowed) {
  Tag tag;
  EXPECT_FALSE(parse_tag("canary=", &tag));
  EXPECT_EQ(tag, Tag("canary", ""));
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

namespace nmprof {
namespace {

// Issue 15, finding 9: a directory named like options must stay part of the path.
TEST(AgentOptions, ValuesThatLookLikeOptionsStayValues) {
  for (std::string file : {"x,live=false/%p.jfr", "x,file=/etc/passwd", "a\\,b=c\\\\", "trailing\\", "=,=,",
                           "/tmp/dir,reply=/x/%p.jfr", "\\\\,\\="}) {
    AgentOptions o;
    o.file = file;
    o.reply = "/tmp/r,live=false";
    o.token = "t=1";
    AgentOptions back;
    auto error = parse_agent_options(format_agent_options(o), back);
    ASSERT_FALSE(error) << *error << " for " << format_agent_options(o);
    EXPECT_EQ(back.file, file) << format_agent_options(o);
    EXPECT_EQ(back.reply, o.reply);
    EXPECT_EQ(back.token, o.token);
    EXPECT_TRUE(back.live);
  }
}

TEST(AgentOptions, BackslashesBeforeOtherCharactersAreKept) {
  AgentOptions o;
  EXPECT_FALSE(parse_agent_options("file=/tmp/a\\b.jfr", o));
  EXPECT_EQ(o.file, "/tmp/a\\b.jfr");
  EXPECT_FALSE(parse_agent_options("file=/tmp/a\\,live\\=false", o));
  EXPECT_EQ(o.file, "/tmp/a,live=false");
}

// Random values of the characters that matter always come back exactly.
TEST(AgentOptions, EscapingRoundTripsRandomValues) {
  const char alphabet[] = ",=\\a/%p ";
  unsigned seed = 12345;
  for (int round = 0; round < 20000; round++) {
    std::string value;
    size_t length = 1 + (seed = seed * 1103515245 + 12345) % 12;
    for (size_t i = 0; i < length; i++) value += alphabet[(seed = seed * 1103515245 + 12345) >> 16 & 7];
    AgentOptions o;
    o.file = value;
    o.reply = value;
    AgentOptions back;
    ASSERT_FALSE(parse_agent_options(format_agent_options(o), back)) << value;
    ASSERT_EQ(back.file, value);
    ASSERT_EQ(back.reply, value);
  }
}

}  // namespace
}  // namespace nmprof

namespace nmprof {
namespace {

TEST(AgentOptions, TheBrokerAndTheCheckedSeccompFiltersRoundTrip) {
  AgentOptions o;
  o.broker_fd = 19999;
  o.broker_inode = 206249;
  o.seccomp_checked = 2;
  AgentOptions back;
  ASSERT_FALSE(parse_agent_options(format_agent_options(o), back)) << format_agent_options(o);
  EXPECT_EQ(back.broker_fd, 19999);
  EXPECT_EQ(back.broker_inode, 206249u);
  EXPECT_EQ(back.seccomp_checked, 2u);
  AgentOptions none;
  EXPECT_EQ(format_agent_options(none).find("broker"), std::string::npos);
  EXPECT_EQ(format_agent_options(none).find("seccomp"), std::string::npos);
}

TEST(AgentOptions, ABadBrokerOrSeccompIsNamed) {
  for (const char* text : {"broker=12", "broker=12:", "broker=:5", "broker=x:5", "broker=12:0", "broker=12:5x"}) {
    AgentOptions o;
    auto error = parse_agent_options(text, o);
    ASSERT_TRUE(error) << text;
    EXPECT_NE(error->find("bad broker"), std::string::npos) << *error;
  }
  AgentOptions o;
  auto error = parse_agent_options("seccomp=two", o);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("bad seccomp 'two'"), std::string::npos) << *error;
}

}  // namespace
}  // namespace nmprof
