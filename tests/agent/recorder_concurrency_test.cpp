// The recorder, its stripes, its stack table and the live heap driven by many threads
// at once the way the hooks drive them: sampled allocations, frees through the
// lock-free filter, realloc's take/settle, with threads that start and exit, while
// the recorder's writer thread writes and other threads flush and ask for status (as
// exit paths and `attach status` do). The recording read back must hold every sample
// and every free of a tracked block. Built with -DNMPROF_SANITIZE=thread,
// ThreadSanitizer checks the same run for data races.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/recording/recorder.h"
#include "agent/sampling/live_heap.h"
#include "agent/sampling/rate_limit.h"
#include "agent/stacks/frame_resolver.h"
#include "tests/agent/numbered_frames.h"
#include "agent/threads/thread_state.h"
#include "profile/jfr_profile.h"

namespace nmprof {
namespace {

constexpr int kThreads = 4;
constexpr int kShortLivedThreads = 24;  // started and ended while the others run
constexpr int kAllocationsPerThread = 3000;
constexpr int kDistinctStacks = 50;  // per thread, so that threads share some and add others
constexpr int kDistinctRoutes = 40;  // context attribute values, shared by all threads

std::string route(int n) { return "/route/" + std::to_string(n % kDistinctRoutes); }

// Out of line: GCC 12 under -fsanitize=null tests the thread-local's address in a
// long function with the flags of an earlier comparison (a false "null" report).
__attribute__((noinline)) void set_thread_context(nmprof_context_block* context) { t_state.context = context; }

// One host thread: allocates with a few recurring stacks and routes in its context,
// frees about half of its blocks (through the filter, as the free hook does) and
// reallocs some.
void host_thread(Recorder& recorder, int index, int allocations) {
  ThreadState& t = t_state;
  nmprof_context_block context = {};
  set_thread_context(&context);
  CallFrame frames[8];
  std::mt19937 random(index);
  std::vector<uintptr_t> live;
  for (int i = 0; i < allocations; ++i) {
    CallStack stack{frames, 8};
    int shape = static_cast<int>(random() % kDistinctStacks) + (index % 2) * kDistinctStacks;
    for (int depth = 0; depth <= shape % 8; ++depth) stack.push(CallFrame{uint64_t(0x1000 + shape * 16 + depth), 0, 0, false});
    uintptr_t address = (uintptr_t{1} << 40) + (uintptr_t(index) << 32) + uintptr_t(i) * 64;
    std::string value = route(index + i);
    value.copy(context.values[0], value.size());
    context.value_length[0] = static_cast<uint8_t>(value.size());
    recorder.record_allocation(t, stack, address, 64 + i % 512, 1.0f);
    live.push_back(address);
    if (random() % 2) {
      uintptr_t freed = live[random() % live.size()];
      if (LiveHeap::maybe_tracked(reinterpret_cast<void*>(freed))) {
        LiveHeap::Block block;
        uint64_t taken_at;
        if (random() % 4 == 0 && recorder.take_block(t, freed, &block, &taken_at)) {
          recorder.settle_block(t, block, taken_at, /*freed=*/true);  // a realloc that moved the block
        } else {
          recorder.record_free(t, freed);
        }
      }
      live.erase(std::find(live.begin(), live.end(), freed));
    }
  }
  set_thread_context(nullptr);
}

TEST(RecorderConcurrency, KeepsEverySampleAndFreeOfManyThreads) {
  std::string path = "/tmp/nmprof-recorder-concurrency-" + std::to_string(getpid()) + ".jfr";
  NumberedFrames resolver;
  RateLimit rate;  // off: a fixed interval
  Recorder recorder(resolver, rate);
  recorder.start(path, {{"nativemem", "0"}}, /*max_tracked=*/1 << 20, /*create_file=*/true, {}, {"route"});

  std::atomic<bool> done{false};
  std::thread flusher([&] {
    while (!done.load()) {
      recorder.flush();
      EXPECT_TRUE(recorder.status().recording);
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> hosts;
  for (int i = 0; i < kThreads; ++i) hosts.emplace_back(host_thread, std::ref(recorder), i, kAllocationsPerThread);
  // Short-lived threads, a few at a time: what they recorded must outlive them.
  int short_lived_allocations = kAllocationsPerThread / 10;
  for (int i = 0; i < kShortLivedThreads; i += 2) {
    std::thread a(host_thread, std::ref(recorder), kThreads + i, short_lived_allocations);
    std::thread b(host_thread, std::ref(recorder), kThreads + i + 1, short_lived_allocations);
    a.join();
    b.join();
  }
  for (std::thread& host : hosts) host.join();
  done = true;
  flusher.join();
  Recorder::Status status = recorder.status();
  recorder.finish();

  profile::Profile profile = profile::read_profile(path);
  std::remove(path.c_str());
  EXPECT_TRUE(profile.warnings.empty());
  EXPECT_EQ(status.lost_samples, 0u);
  profile::Totals allocated, live;
  for (const auto& a : profile.allocations()) {
    allocated.add(a.allocated);
    live.add(a.live);
  }
  EXPECT_EQ(status.samples, allocated.samples);
  EXPECT_EQ(allocated.samples, uint64_t(kThreads * kAllocationsPerThread + kShortLivedThreads * short_lived_allocations));
  // Every block not freed is still tracked, and every free that was tracked was written.
  EXPECT_EQ(profile.matched_frees() + status.tracked_blocks, allocated.samples);
  EXPECT_EQ(profile.unmatched_frees(), 0u);
  EXPECT_EQ(live.samples, status.tracked_blocks);
  EXPECT_EQ(profile.stacks().size(), 2u * kDistinctStacks);
  // Every sample carries the route its thread had set, found through the string pool.
  std::set<std::string> routes;
  for (const profile::Allocation& a : profile.allocations()) routes.insert(profile.attribute(a.context, "route"));
  std::set<std::string> expected;
  for (int n = 0; n < kDistinctRoutes; n++) expected.insert(route(n));
  EXPECT_EQ(routes, expected);
}

// Threads grow their blocks by reallocs, mostly in place (one Free-with-move per
// block at each write), sometimes elsewhere (an event at once), and free some,
// while another thread writes the recording again and again: the live view ends
// with every block's last size, and no free or move is left without its block.
TEST(RecorderConcurrency, BlocksResizedInPlaceEndAtTheirLastSize) {
  std::string path = "/tmp/nmprof-recorder-resizes-" + std::to_string(getpid()) + ".jfr";
  NumberedFrames resolver;
  RateLimit rate;
  Recorder recorder(resolver, rate);
  recorder.start(path, {{"nativemem", "0"}}, /*max_tracked=*/1 << 20, /*create_file=*/true);
  std::atomic<bool> done{false};
  std::thread flusher([&] {
    while (!done.load()) recorder.flush();
  });
  std::vector<uint64_t> live_bytes(kThreads);
  std::vector<std::thread> hosts;
  for (int index = 0; index < kThreads; ++index) {
    hosts.emplace_back([&, index] {
      ThreadState& t = t_state;
      CallFrame frames[1];
      CallStack stack{frames, 1};
      stack.push(CallFrame{uint64_t(0x1000 + index), 0, 0, false});
      std::mt19937 random(index);
      std::vector<std::pair<uintptr_t, uint64_t>> blocks;  // address, size
      uintptr_t next = (uintptr_t{1} << 40) + (uintptr_t(index) << 32);
      for (int i = 0; i < 20; i++, next += 4096) {
        recorder.record_allocation(t, stack, next, 64, 1.0f);
        blocks.push_back({next, 64});
      }
      for (int i = 0; i < 20000 && !blocks.empty(); i++) {
        size_t k = random() % blocks.size();
        auto& [address, size] = blocks[k];
        if (random() % 500 == 0) {
          recorder.record_free(t, address);
          blocks.erase(blocks.begin() + static_cast<ptrdiff_t>(k));
          continue;
        }
        LiveHeap::Block block;
        uint64_t taken_at;
        ASSERT_TRUE(recorder.take_block(t, address, &block, &taken_at));
        size += 1 + random() % 100;
        if (random() % 50 == 0) address = (next += 4096);
        recorder.move_block(t, block, taken_at, address, size, 1.0f);
      }
      for (const auto& [address, size] : blocks) live_bytes[index] += size;
    });
  }
  for (std::thread& host : hosts) host.join();
  done = true;
  flusher.join();
  recorder.finish();

  profile::Profile profile = profile::read_profile(path);
  std::remove(path.c_str());
  EXPECT_TRUE(profile.warnings.empty());
  double live = 0;
  for (const auto& a : profile.allocations()) live += a.live.bytes;
  uint64_t expected = 0;
  for (uint64_t bytes : live_bytes) expected += bytes;
  EXPECT_DOUBLE_EQ(live, static_cast<double>(expected));
  EXPECT_EQ(profile.unmatched_frees(), 0u);
}

}  // namespace
}  // namespace nmprof
