// Context attribute values go through the java.lang.String pool: an event carries a
// key, each file holds each value's entry, and a recording whose samples all carry a
// long value costs a few bytes per sample for it, not the value's length.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "agent/recording/recorder.h"
#include "agent/sampling/rate_limit.h"
#include "agent/stacks/frame_resolver.h"
#include "tests/agent/numbered_frames.h"
#include "agent/threads/thread_state.h"
#include "profile/jfr_profile.h"

namespace nmprof {
namespace {

constexpr int kSamples = 2000;

void set_value(nmprof_context_block& block, int slot, const std::string& value) {
  value.copy(block.values[slot], value.size());
  block.value_length[slot] = static_cast<uint8_t>(value.size());
}

void record_one(Recorder& recorder, uint64_t address) {
  CallFrame frames[1];
  CallStack stack{frames, 1};
  stack.push(CallFrame{0x1000, 0, 0, false});
  recorder.record_allocation(t_state, stack, address, 64, 1.0f);
}

// Records kSamples allocations, the thread's context alternating between two
// routes (or no route at all), into `path`; returns the file's size.
off_t record(Recorder& recorder, const std::string& path, const std::string& route_a, const std::string& route_b) {
  recorder.start(path, {{"nativemem", "0"}}, /*max_tracked=*/0, /*create_file=*/true, {}, {"route", "tenant"});
  nmprof_context_block block = {};
  t_state.context = &block;
  for (int i = 0; i < kSamples; i++) {
    set_value(block, 0, i % 2 ? route_b : route_a);
    set_value(block, 1, "");
    record_one(recorder, 0x10000 + i * 64);
  }
  t_state.context = nullptr;
  recorder.finish();
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

TEST(RecorderContext, AttributeValuesArePooledInEveryFile) {
  std::string base = "/tmp/nmprof-recorder-context-" + std::to_string(getpid());
  NumberedFrames resolver;
  RateLimit rate;
  Recorder recorder(resolver, rate);
  std::string a(60, 'a'), b = "/checkout/" + std::string(50, 'b');
  off_t empty = record(recorder, base + "-empty.jfr", "", "");
  off_t pooled = record(recorder, base + "-pooled.jfr", a, b);
  // The same values again in a new file (a new generation): their entries are written again.
  off_t again = record(recorder, base + "-again.jfr", b, a);
  ASSERT_GT(empty, 0);
  // Inline, each sample would carry its 60 bytes; a pool key takes at most 9.
  EXPECT_LT(pooled - empty, kSamples * 12) << "pooled " << pooled << ", without values " << empty;
  EXPECT_LT(again - empty, kSamples * 12) << "again " << again << ", without values " << empty;

  for (const char* name : {"-pooled.jfr", "-again.jfr"}) {
    profile::Profile profile = profile::read_profile(base + name);
    EXPECT_TRUE(profile.warnings.empty()) << name;
    uint64_t samples = 0, with_a = 0;  // samples are summed by origin, context included
    for (const profile::Allocation& allocation : profile.allocations()) {
      const std::string& route = profile.attribute(allocation.context, "route");
      EXPECT_TRUE(route == a || route == b) << name << ": '" << route << "'";
      EXPECT_EQ(profile.attribute(allocation.context, "tenant"), "");
      samples += allocation.allocated.samples;
      if (route == a) with_a += allocation.allocated.samples;
    }
    EXPECT_EQ(samples, uint64_t(kSamples)) << name;
    EXPECT_EQ(with_a, uint64_t(kSamples / 2)) << name;
  }
  for (const char* name : {"-empty.jfr", "-pooled.jfr", "-again.jfr"}) std::remove((base + name).c_str());
}

// The child keeps the table of values; its own file holds the entries of those it uses.
TEST(RecorderContext, AForkedChildWritesTheValuesItUses) {
  std::string path = "/tmp/nmprof-recorder-context-fork-%p.jfr";
  NumberedFrames resolver;
  RateLimit rate;
  Recorder recorder(resolver, rate);
  recorder.start(path, {{"nativemem", "0"}}, /*max_tracked=*/0, /*create_file=*/true, {}, {"route"});
  nmprof_context_block block = {};
  t_state.context = &block;
  set_value(block, 0, "/checkout/in-the-parent-first");
  record_one(recorder, 0x10000);
  recorder.before_fork();
  pid_t child = fork();
  if (child == 0) {
    recorder.after_fork_in_child();
    record_one(recorder, 0x20000);
    recorder.finish();
    _exit(0);
  }
  recorder.after_fork_in_parent();
  t_state.context = nullptr;
  recorder.finish();
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::string child_file = "/tmp/nmprof-recorder-context-fork-" + std::to_string(child) + ".jfr";
  std::string parent_file = "/tmp/nmprof-recorder-context-fork-" + std::to_string(getpid()) + ".jfr";
  profile::Profile profile = profile::read_profile(child_file);
  std::remove(child_file.c_str());
  std::remove(parent_file.c_str());
  EXPECT_TRUE(profile.warnings.empty());
  // The child's sample only (the profile keeps samples summed, without their addresses).
  ASSERT_EQ(profile.allocations().size(), 1u);
  EXPECT_EQ(profile.allocations()[0].allocated.samples, 1u);
  EXPECT_EQ(profile.attribute(profile.allocations()[0].context, "route"), "/checkout/in-the-parent-first");
}

}  // namespace
}  // namespace nmprof
