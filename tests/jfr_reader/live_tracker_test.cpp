// Which allocations a recording's frees free, in time order whatever the file order.
#include "profile/live_tracker.h"

#include <gtest/gtest.h>

#include <map>

namespace nmprof::profile {
namespace {

constexpr int64_t kLive = -1;

// Feeds a tracker and keeps what pairing told: when each allocation (by id) was freed.
struct Pairing {
  LiveTracker tracker;
  std::map<uint32_t, int64_t> freed_at;  // kLive while live
  LiveTracker::Changes changes = [this](const LiveTracker::Block& b, std::optional<int64_t> when) {
    EXPECT_EQ(freed_at.count(b.allocation), when ? 1u : 0u) << "allocation " << b.allocation;
    freed_at[b.allocation] = when ? *when : kLive;
  };

  void alloc(uint32_t process, uint32_t id, int64_t time, uint64_t address) {
    tracker.allocated(process, address, {id, 1, time, 8}, changes);
  }
  void free(uint32_t process, int64_t time, uint64_t address) { tracker.freed(process, address, time, changes); }
};

TEST(LiveTracker, InTimeOrderAFreeFreesTheLatestLiveAllocationAtItsAddress) {
  Pairing p;
  p.alloc(0, 1, 1, 0xA);  // freed at 2
  p.free(0, 2, 0xA);
  p.alloc(0, 2, 3, 0xA);  // the address reused: live
  p.alloc(0, 3, 4, 0xB);  // a free the recording missed: hidden by the next one, then freed at 7
  p.alloc(0, 4, 5, 0xB);  // freed at 6
  p.free(0, 6, 0xB);
  p.free(0, 7, 0xB);
  p.free(0, 7, 0xD);      // never allocated
  p.alloc(1, 5, 1, 0xA);  // another process: untouched by process 0's frees
  p.tracker.settle(p.changes);
  EXPECT_EQ(p.freed_at, (std::map<uint32_t, int64_t>{{1, 2}, {2, kLive}, {3, 7}, {4, 6}, {5, kLive}}));
  EXPECT_EQ(p.tracker.matched_frees(), 3u);
  EXPECT_EQ(p.tracker.unmatched_frees(), 1u);
}

// As the agent's striped buffers write them: the free of the first block and the
// second allocation come after the second free in the file.
TEST(LiveTracker, PairsInTimeOrderWhateverTheFileOrder) {
  Pairing p;
  p.tracker.hold_from(0, 1, p.changes);
  p.alloc(0, 1, 1, 0xA);
  p.free(0, 4, 0xA);  // frees allocation 2, made at 3
  p.free(0, 2, 0xA);  // frees allocation 1
  p.alloc(0, 2, 3, 0xA);
  p.free(0, 10, 0xB);  // a free before its allocation in the file
  p.alloc(0, 3, 5, 0xB);
  p.alloc(0, 4, 6, 0xC);  // live
  p.tracker.settle(p.changes);
  EXPECT_EQ(p.freed_at, (std::map<uint32_t, int64_t>{{1, 2}, {2, 4}, {3, 10}, {4, kLive}}));
  EXPECT_EQ(p.tracker.matched_frees(), 3u);
  EXPECT_EQ(p.tracker.unmatched_frees(), 0u);
}

TEST(LiveTracker, AtEqualTimesAllocationsComeFirstThenFileOrder) {
  Pairing p;
  p.tracker.hold_from(0, 0, p.changes);
  p.free(0, 5, 0xA);
  p.alloc(0, 1, 5, 0xA);  // same time as the free, later in the file: still freed by it
  p.alloc(0, 2, 7, 0xB);
  p.alloc(0, 3, 7, 0xB);  // the later in the file of two at once: the free takes it
  p.free(0, 8, 0xB);
  p.tracker.settle(p.changes);
  EXPECT_EQ(p.freed_at, (std::map<uint32_t, int64_t>{{1, 5}, {2, kLive}, {3, 8}}));
}

// What may still be preceded waits; what no event still to come can precede is
// paired, so a long recording does not pile up events.
TEST(LiveTracker, PairsWhatNoEventStillToComeCanPrecede) {
  Pairing p;
  uint32_t id = 0;
  for (int64_t t = 0; t < 20000; t += 2) {
    p.tracker.hold_from(0, t - 100, p.changes);  // events come at most 100 ns late
    p.alloc(0, id++, t, 0x1000 + static_cast<uint64_t>(t % 64));
    p.free(0, t + 1, 0x1000 + static_cast<uint64_t>(t % 64));
  }
  size_t paired = p.freed_at.size();
  EXPECT_GT(paired, 5000u);
  EXPECT_LT(paired, 10000u);  // the last ones wait
  p.tracker.settle(p.changes);
  EXPECT_EQ(p.freed_at.size(), 10000u);
  for (auto [id, when] : p.freed_at) EXPECT_EQ(when, static_cast<int64_t>(2 * id + 1));
  EXPECT_EQ(p.tracker.matched_frees(), 10000u);
}

}  // namespace
}  // namespace nmprof::profile
