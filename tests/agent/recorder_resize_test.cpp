// A tracked block that reallocs resize in place (a string appended to in a loop) is
// written with its size at each write of the recording, not with an event per
// realloc; the live view still ends with its last size.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>

#include "agent/recording/recorder.h"
#include "agent/sampling/rate_limit.h"
#include "agent/stacks/frame_resolver.h"
#include "tests/agent/numbered_frames.h"
#include "agent/threads/thread_state.h"
#include "profile/jfr_profile.h"

namespace nmprof {
namespace {

constexpr uintptr_t kBlock = 0x7f0000010000;
constexpr uint64_t kStep = 100;

class RecorderResize : public ::testing::Test {
 protected:
  void SetUp() override {
    recorder.start(path, {{"nativemem", "0"}}, /*max_tracked=*/1024, /*create_file=*/true);
    CallFrame frames[1];
    CallStack stack{frames, 1};
    stack.push(CallFrame{0x1000, 0, 0, false});
    recorder.record_allocation(t_state, stack, kBlock, size, 1.0f);
  }
  void TearDown() override { std::remove(path.c_str()); }

  // `times` reallocs that each grow the block by kStep where it is.
  void grow_in_place(int times) {
    for (int i = 0; i < times; i++) {
      LiveHeap::Block block;
      uint64_t taken_at;
      ASSERT_TRUE(recorder.take_block(t_state, kBlock, &block, &taken_at));
      size += kStep;
      recorder.move_block(t_state, block, taken_at, kBlock, size, 1.0f);
    }
  }

  profile::Profile finished() {
    recorder.finish();
    return profile::read_profile(path);
  }

  static double live_bytes(const profile::Profile& profile) {
    double bytes = 0;
    for (const profile::Allocation& a : profile.allocations()) bytes += a.live.bytes;
    return bytes;
  }

  std::string path = "/tmp/nmprof-recorder-resize-" + std::to_string(getpid()) + ".jfr";
  NumberedFrames resolver;
  RateLimit rate;
  Recorder recorder{resolver, rate};
  uint64_t size = 1000;
};

TEST_F(RecorderResize, ABlockResizedInPlaceIsWrittenOnceNotPerRealloc) {
  grow_in_place(10000);
  profile::Profile profile = finished();
  EXPECT_DOUBLE_EQ(live_bytes(profile), static_cast<double>(size));
  // Before: a Free event with the block's new size for each of the 10,000 reallocs.
  EXPECT_EQ(profile.matched_frees(), 1u);
  EXPECT_EQ(profile.unmatched_frees(), 0u);
}

TEST_F(RecorderResize, EachWriteSaysTheSizeTheBlockHasThen) {
  grow_in_place(10);
  recorder.flush();
  grow_in_place(10);
  recorder.flush();
  recorder.flush();  // nothing resized since the last write: nothing to say
  grow_in_place(10);
  profile::Profile profile = finished();
  EXPECT_DOUBLE_EQ(live_bytes(profile), static_cast<double>(size));
  EXPECT_EQ(profile.matched_frees(), 3u);
}

TEST_F(RecorderResize, TheSizeIsDatedByTheLastResizeNotByTheWrite) {
  // A free of the block on another thread takes its time before it looks the block
  // up: a write that dated the new size by itself could put the size after the free.
  grow_in_place(10);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  recorder.flush();
  profile::Profile profile = finished();
  ASSERT_EQ(profile.live_samples().size(), 1u);
  ASSERT_EQ(profile.processes.size(), 1u);
  int64_t before_end = profile.processes[0].end_nanos - profile.live_samples()[0].time_nanos;
  EXPECT_GE(before_end, 100'000'000) << "the size is dated by the write, not by the resize";
}

TEST_F(RecorderResize, ABlockItsRuntimeKeepsLiveKeepsItsLastSize) {
  grow_in_place(10);
  // The PHP CLI's shutdown frees what the script held: it stays live, without a Free.
  recorder.record_free(t_state, kBlock, /*kept_if_born_before=*/UINT64_MAX);
  EXPECT_DOUBLE_EQ(live_bytes(finished()), static_cast<double>(size));
}

TEST_F(RecorderResize, AResizedBlockThatIsFreedIsGone) {
  grow_in_place(10);
  recorder.record_free(t_state, kBlock);
  profile::Profile profile = finished();
  EXPECT_DOUBLE_EQ(live_bytes(profile), 0.0);
  EXPECT_EQ(profile.unmatched_frees(), 0u);
}

TEST_F(RecorderResize, AResizedBlockMovedElsewhereLivesThereWithItsNewSize) {
  grow_in_place(10);
  LiveHeap::Block block;
  uint64_t taken_at;
  ASSERT_TRUE(recorder.take_block(t_state, kBlock, &block, &taken_at));
  recorder.move_block(t_state, block, taken_at, kBlock + 0x100000, size + kStep, 1.0f);
  profile::Profile profile = finished();
  EXPECT_DOUBLE_EQ(live_bytes(profile), static_cast<double>(size + kStep));
  EXPECT_EQ(profile.matched_frees(), 1u);  // the move; the resizes before it are not written
}

}  // namespace
}  // namespace nmprof
