// Which allocations a recording's frees free, in file order and out of time order.
#include "formats/profile/live_tracker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace nmprof::profile {
namespace {

// Allocation ids of the blocks still live, in order.
std::vector<uint32_t> live(const LiveTracker& tracker) {
  std::vector<uint32_t> ids;
  tracker.for_each_live([&](const LiveTracker::Block& b) { ids.push_back(b.allocation); });
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(LiveTracker, FreesTheLatestLiveAllocationAtTheAddressMadeBeforeIt) {
  LiveTracker t;
  auto alloc = [&](uint32_t process, uint32_t id, int64_t time, uint64_t address) {
    return t.allocated(process, address, {id, 1, time, 8});
  };
  alloc(0, 1, 1, 0xA);  // freed at 2
  alloc(0, 2, 3, 0xA);  // the address reused: live
  alloc(0, 3, 4, 0xB);  // live: the free at 6 takes the later one
  alloc(0, 4, 5, 0xB);  // freed at 6
  alloc(0, 5, 8, 0xC);  // freed at 8
  alloc(1, 6, 1, 0xA);  // another process: untouched by process 0's frees
  // Frees in file order unlike time order.
  EXPECT_EQ(t.freed(0, 0xB, 6)->allocation, 4u);
  EXPECT_EQ(t.freed(0, 0xA, 2)->allocation, 1u);
  EXPECT_FALSE(t.freed(0, 0xD, 7));  // never allocated
  EXPECT_FALSE(t.freed(0, 0xA, 0));  // before any allocation at 0xA
  EXPECT_EQ(t.freed(0, 0xC, 8)->allocation, 5u);  // same time as its allocation
  EXPECT_EQ(live(t), (std::vector<uint32_t>{2, 3, 6}));
  EXPECT_EQ(t.matched_frees(), 3u);
  EXPECT_EQ(t.unmatched_frees(), 2u);
}

TEST(LiveTracker, AFreeMetBeforeItsAllocationWaitsForIt) {
  LiveTracker t;
  EXPECT_FALSE(t.freed(0, 0xA, 10));
  EXPECT_EQ(t.unmatched_frees(), 1u);
  EXPECT_TRUE(t.allocated(0, 0xA, {1, 1, 20, 8}));   // after the free: stays live
  EXPECT_FALSE(t.allocated(0, 0xA, {2, 1, 5, 8}));   // before it: the waiting free takes it
  EXPECT_EQ(live(t), std::vector<uint32_t>{1});
  EXPECT_EQ(t.matched_frees(), 1u);
  EXPECT_EQ(t.unmatched_frees(), 0u);
}

}  // namespace
}  // namespace nmprof::profile
