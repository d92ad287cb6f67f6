#include "agent/sampling/live_heap.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

namespace nmprof {
namespace {

LiveHeap::Block block(uintptr_t address, uint64_t size = 100, float weight = 2.0f) {
  return {address, size, 1, weight, 7};
}

uintptr_t address_of(uint64_t i) { return 0x7f0000000000ull + i * 48; }

constexpr int kSelf = 1;  // the thread id the heap's locks are taken with

class LiveHeapTest : public ::testing::Test {
 protected:
  void TearDown() override { heap.clear(kSelf); }  // the filter is shared by every LiveHeap
  LiveHeap heap{1 << 20};
};

TEST_F(LiveHeapTest, ForgetsEveryBlockOfOneAllocatorAndKeepsTheOthers) {
  // Enough blocks that removals shift others back across the table, its end included.
  std::unordered_map<uintptr_t, uint8_t> allocator_of;
  for (uint64_t i = 0; i < 5000; i++) {
    LiveHeap::Block b = block(address_of(i));
    b.allocator = i % 3 == 0 ? 1 : 0;
    ASSERT_TRUE(heap.insert(b, kSelf));
    allocator_of[b.address] = b.allocator;
  }
  ASSERT_TRUE(heap.insert(block(address_of(0)), kSelf));  // the same address again, now of allocator 0
  allocator_of[address_of(0)] = 0;
  size_t ones = 0;
  for (const auto& [address, allocator] : allocator_of) ones += allocator == 1;
  EXPECT_EQ(heap.blocks_of(1), ones);
  std::vector<uintptr_t> forgotten;
  heap.remove_all_of(1, kSelf, [&](uintptr_t address) { forgotten.push_back(address); });
  EXPECT_EQ(forgotten.size(), ones);
  for (uintptr_t address : forgotten) EXPECT_EQ(allocator_of[address], 1);
  EXPECT_EQ(heap.blocks_of(1), 0u);
  EXPECT_EQ(heap.blocks(), allocator_of.size() - ones);
  LiveHeap::Block out;
  for (const auto& [address, allocator] : allocator_of)
    EXPECT_EQ(heap.remove(address, &out, kSelf), allocator == 0) << address;
  EXPECT_EQ(heap.blocks_of(0), 0u);
}

TEST_F(LiveHeapTest, TracksUntilRemoved) {
  ASSERT_TRUE(heap.insert(block(0x1000, 64, 3.0f), kSelf));
  EXPECT_TRUE(LiveHeap::maybe_tracked(reinterpret_cast<void*>(0x1000)));
  EXPECT_DOUBLE_EQ(heap.live_bytes(), 192.0);
  LiveHeap::Block out;
  EXPECT_FALSE(heap.remove(0x2000, &out, kSelf));
  ASSERT_TRUE(heap.remove(0x1000, &out, kSelf));
  EXPECT_EQ(out.size, 64u);
  EXPECT_EQ(out.stack, 7u);
  EXPECT_FALSE(heap.remove(0x1000, &out, kSelf));
  EXPECT_FALSE(LiveHeap::maybe_tracked(reinterpret_cast<void*>(0x1000)));
  EXPECT_EQ(heap.blocks(), 0u);
  EXPECT_DOUBLE_EQ(heap.live_bytes(), 0.0);
}

TEST_F(LiveHeapTest, MatchesAReferenceMapUnderRandomChurn) {
  std::mt19937_64 rng(7);
  std::unordered_map<uintptr_t, uint64_t> reference;
  for (int step = 0; step < 400000; step++) {
    uintptr_t a = address_of(rng() % 50000);
    if (rng() % 2) {
      uint64_t size = 1 + rng() % 1000;
      ASSERT_TRUE(heap.insert(block(a, size), kSelf));
      reference[a] = size;
    } else {
      LiveHeap::Block out;
      bool removed = heap.remove(a, &out, kSelf);
      ASSERT_EQ(removed, reference.count(a) == 1) << step;
      if (removed) {
        EXPECT_EQ(out.size, reference[a]);
        reference.erase(a);
      }
    }
  }
  EXPECT_EQ(heap.blocks(), reference.size());
  for (const auto& [a, size] : reference) {
    ASSERT_TRUE(LiveHeap::maybe_tracked(reinterpret_cast<void*>(a)));
    LiveHeap::Block out;
    ASSERT_TRUE(heap.remove(a, &out, kSelf));
    EXPECT_EQ(out.size, size);
  }
  EXPECT_EQ(heap.blocks(), 0u);
}

TEST_F(LiveHeapTest, FilterIsMostlyNegativeForUntrackedAddresses) {
  for (uint64_t i = 0; i < 10000; i++) ASSERT_TRUE(heap.insert(block(address_of(i)), kSelf));
  int false_positives = 0;
  for (uint64_t i = 10000; i < 110000; i++) false_positives += LiveHeap::maybe_tracked(reinterpret_cast<void*>(address_of(i)));
  // 10,000 blocks in 2^21 buckets: about 0.5% of other addresses share a bucket.
  EXPECT_LT(false_positives, 1500);
}

TEST(LiveHeapCap, CountsWhatItCannotTrack) {
  LiveHeap heap(100);
  for (uint64_t i = 0; i < 150; i++) heap.insert(block(address_of(i)), kSelf);
  EXPECT_EQ(heap.blocks(), 100u);
  EXPECT_EQ(heap.untracked(), 50u);
  LiveHeap::Block out;
  EXPECT_TRUE(heap.remove(address_of(5), &out, kSelf));
  EXPECT_TRUE(heap.insert(block(address_of(1000)), kSelf));
  EXPECT_EQ(heap.untracked(), 50u);
  EXPECT_GT(heap.memory_bytes(), 0u);
  heap.clear(kSelf);
}

// Writers insert and remove concurrently (as sampling and freeing threads do) while
// readers ask the filter without a lock (as free() does): a tracked block must never
// look untracked, and the heap's count must match what is left.
TEST_F(LiveHeapTest, FilterHasNoFalseNegativesUnderConcurrentChurn) {
  const uint64_t kStable = 2000;
  for (uint64_t i = 0; i < kStable; i++) ASSERT_TRUE(heap.insert(block(address_of(i)), kSelf));
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> misses{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; w++) {
    threads.emplace_back([&, w] {
      std::mt19937_64 rng(w);
      for (int step = 0; step < 200000; step++) {
        uintptr_t a = address_of(kStable + w * 100000 + rng() % 5000);
        LiveHeap::Block out;
        if (!heap.remove(a, &out, w + 1)) heap.insert(block(a), w + 1);
      }
    });
  }
  for (int r = 0; r < 2; r++) {
    threads.emplace_back([&] {
      while (!stop.load()) {
        for (uint64_t i = 0; i < kStable; i++)
          if (!LiveHeap::maybe_tracked(reinterpret_cast<void*>(address_of(i)))) misses++;
      }
    });
  }
  threads[0].join();
  threads[1].join();
  stop = true;
  threads[2].join();
  threads[3].join();
  EXPECT_EQ(misses.load(), 0u);
  size_t left = heap.blocks();
  for (uint64_t i = 0; i < kStable; i++) {
    LiveHeap::Block out;
    ASSERT_TRUE(heap.remove(address_of(i), &out, kSelf)) << i;
  }
  size_t churned = 0;
  for (uint64_t a = 0; a < 2 * 100000 + 5000; a++) {
    LiveHeap::Block out;
    churned += heap.remove(address_of(kStable + a), &out, kSelf);
  }
  EXPECT_EQ(left, kStable + churned);
  EXPECT_EQ(heap.blocks(), 0u);
}

constexpr int kOther = 2;  // another thread

TEST_F(LiveHeapTest, ABlockTakenByAReallocIsHiddenFromOtherThreads) {
  ASSERT_TRUE(heap.insert(block(0x1000, 64), kSelf));
  LiveHeap::Block taken, out;
  ASSERT_TRUE(heap.take(0x1000, &taken, kSelf));
  EXPECT_EQ(taken.size, 64u);
  EXPECT_FALSE(heap.remove(0x1000, &out, kOther));
  EXPECT_FALSE(heap.take(0x1000, &out, kOther));
  // The realloc freed the address and another thread's sampled block got it.
  ASSERT_TRUE(heap.insert(block(0x1000, 32), kOther));
  EXPECT_EQ(heap.blocks(), 2u);
  EXPECT_TRUE(heap.remove_taken(0x1000, kSelf));
  EXPECT_FALSE(heap.remove_taken(0x1000, kSelf));
  ASSERT_TRUE(heap.remove(0x1000, &out, kOther));
  EXPECT_EQ(out.size, 32u);
  EXPECT_EQ(heap.blocks(), 0u);
  EXPECT_DOUBLE_EQ(heap.live_bytes(), 0.0);
}

TEST_F(LiveHeapTest, ATakenBlockPutBackOrResizedIsEveryThreadsAgain) {
  ASSERT_TRUE(heap.insert(block(0x1000, 64, 1.0f), kSelf));
  LiveHeap::Block taken, out;
  ASSERT_TRUE(heap.take(0x1000, &taken, kSelf));
  heap.put_back(0x1000, kSelf);
  ASSERT_TRUE(heap.take(0x1000, &taken, kOther));
  EXPECT_FALSE(heap.resize_taken(0x1000, 500, 1.0f, 9, kSelf));  // not this thread's
  ASSERT_TRUE(heap.resize_taken(0x1000, 500, 1.0f, 9, kOther));
  EXPECT_DOUBLE_EQ(heap.live_bytes(), 500.0);
  ASSERT_TRUE(heap.remove(0x1000, &out, kSelf));
  EXPECT_EQ(out.size, 500u);
  EXPECT_EQ(out.resized_at, 9u);
  EXPECT_EQ(out.taken_by, 0);
}

// A tracked block's weight after a realloc is one over its odds of being tracked:
// tracked already, or sampled for what the realloc added. Adding nothing, it keeps
// its odds (malloc(1), then realloc to the 24 bytes the block had: weighed by its 24
// usable bytes, it counted 24 times too little), unless its new size's are fewer.
TEST(LiveHeapWeights, ATrackedBlockKeepsItsOddsAndGainsThoseOfWhatItAdds) {
  EXPECT_FLOAT_EQ(LiveHeap::resized_weight(2.0f, 3.0f, 1.0f), 1.5f);
  EXPECT_FLOAT_EQ(LiveHeap::resized_weight(1.0f, 50.0f, 60.0f), 1.0f);  // always tracked stays so
  EXPECT_FLOAT_EQ(LiveHeap::resized_weight(4000.0f, 1.0f, 1.0f), 1.0f);  // a growth always sampled
  EXPECT_FLOAT_EQ(LiveHeap::resized_weight(16384.5f, 0.0f, 683.2f), 16384.5f);
  EXPECT_FLOAT_EQ(LiveHeap::resized_weight(2.0f, 0.0f, 8.0f), 8.0f);  // shrunk: thinned to its new odds
}

// A block grown in place in a heap of one thread is resized without being taken;
// one whose weight would grow is left for the caller to take (the odds rule).
TEST_F(LiveHeapTest, AGrownBlockIsResizedInOneLookUpUnlessItWouldWeighMore) {
  ASSERT_TRUE(heap.insert(block(0x1000, 64, 2.0f), kSelf));
  // Tracked with odds 1/2, grown by bytes sampled with odds 1/3: 1 - 1/2 * 2/3.
  EXPECT_TRUE(heap.grow(0x1000, 640, 3.0f, 1.25f, 9, kSelf));
  EXPECT_DOUBLE_EQ(heap.live_bytes(), 1.5 * 640);
  EXPECT_FALSE(heap.grow(0x1000, 6400, 0.0f, 1.75f, 10, kSelf));  // heavier: unchanged
  EXPECT_DOUBLE_EQ(heap.live_bytes(), 1.5 * 640);
  EXPECT_TRUE(heap.grow(0x2000, 640, 1.0f, 1.0f, 11, kSelf));  // not tracked: nothing to do
  EXPECT_EQ(heap.blocks(), 1u);
  std::unordered_map<uintptr_t, uint64_t> visited;
  heap.take_resized(kSelf, [&](const LiveHeap::Block& b) { visited[b.address] = b.resized_at; });
  EXPECT_EQ(visited, (std::unordered_map<uintptr_t, uint64_t>{{0x1000, 9}}));
  LiveHeap::Block out;
  ASSERT_TRUE(heap.remove(0x1000, &out, kSelf));
  EXPECT_EQ(out.size, 640u);
  EXPECT_FLOAT_EQ(out.weight, 1.5f);
}

TEST_F(LiveHeapTest, ResizedBlocksAreVisitedOnceTakenOrNot) {
  for (uint64_t i = 0; i < 1000; i++) ASSERT_TRUE(heap.insert(block(address_of(i)), kSelf));
  LiveHeap::Block taken;
  for (uint64_t i = 0; i < 1000; i += 10) {
    ASSERT_TRUE(heap.take(address_of(i), &taken, kSelf));
    ASSERT_TRUE(heap.resize_taken(address_of(i), 1000 + i, 1.0f, 9, kSelf));
  }
  // In a realloc (a slow one, or one of a thread that reallocs it again and again):
  // visited at its size before the take, else it would be written only if it
  // happens to be out of a realloc at a write.
  ASSERT_TRUE(heap.take(address_of(0), &taken, kOther));
  std::unordered_map<uintptr_t, uint64_t> visited;
  heap.take_resized(kSelf, [&](const LiveHeap::Block& b) { visited[b.address] = b.size; });
  EXPECT_EQ(visited.size(), 100u);
  for (uint64_t i = 0; i < 1000; i += 10) EXPECT_EQ(visited[address_of(i)], 1000 + i);
  visited.clear();
  heap.take_resized(kSelf, [&](const LiveHeap::Block& b) { visited[b.address] = b.size; });
  EXPECT_TRUE(visited.empty());
  ASSERT_TRUE(heap.resize_taken(address_of(0), 2000, 1.0f, 10, kOther));
  heap.take_resized(kSelf, [&](const LiveHeap::Block& b) { visited[b.address] = b.size; });
  EXPECT_EQ(visited.size(), 1u);
  EXPECT_EQ(visited[address_of(0)], 2000u);
}

TEST_F(LiveHeapTest, ClearForgetsEverything) {
  for (uint64_t i = 0; i < 1000; i++) heap.insert(block(address_of(i)), kSelf);
  heap.clear(kSelf);
  EXPECT_EQ(heap.blocks(), 0u);
  for (uint64_t i = 0; i < 1000; i++) ASSERT_FALSE(LiveHeap::maybe_tracked(reinterpret_cast<void*>(address_of(i))));
}

}  // namespace
}  // namespace nmprof
