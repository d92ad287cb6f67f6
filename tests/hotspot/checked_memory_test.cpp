// Fault-safe reads: copies of mapped memory, refusals (not faults) for unmapped or
// inaccessible memory, and the window ObjectBytes reads through.
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "agent/java/hotspot/checked_memory.h"

namespace nmprof::hotspot {
namespace {

// Two pages: the first readable, the second not.
class GuardedPages {
 public:
  GuardedPages() : page_(static_cast<size_t>(sysconf(_SC_PAGESIZE))) {
    void* p = mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base_ = static_cast<unsigned char*>(p);
    for (size_t i = 0; i < page_; i++) base_[i] = static_cast<unsigned char>(i * 7);
    mprotect(base_ + page_, page_, PROT_NONE);
  }
  ~GuardedPages() { munmap(base_, 2 * page_); }

  uintptr_t readable() const { return reinterpret_cast<uintptr_t>(base_); }
  uintptr_t forbidden() const { return readable() + page_; }
  size_t page() const { return page_; }
  unsigned char at(size_t i) const { return base_[i]; }

 private:
  size_t page_;
  unsigned char* base_;
};

TEST(ReadSelf, CopiesMappedMemory) {
  GuardedPages pages;
  unsigned char out[64];
  ASSERT_TRUE(read_self(pages.readable() + 100, out, sizeof out));
  for (size_t i = 0; i < sizeof out; i++) EXPECT_EQ(out[i], pages.at(100 + i));
}

TEST(ReadSelf, RefusesInaccessibleMemory) {
  GuardedPages pages;
  unsigned char out[64];
  EXPECT_FALSE(read_self(pages.forbidden(), out, 8));
  EXPECT_FALSE(read_self(pages.forbidden() - 8, out, 16));  // straddles into it
  EXPECT_FALSE(read_self(16, out, 8));                       // the zero page
}

TEST(ObjectBytes, ReadsInsideTheObjectOnly) {
  std::vector<unsigned char> data(100);
  std::iota(data.begin(), data.end(), 0);
  uintptr_t begin = reinterpret_cast<uintptr_t>(data.data());
  for (bool mapped : {true, false}) {
    ObjectBytes bytes({begin, begin + data.size()}, mapped);
    unsigned char out[8] = {};
    ASSERT_TRUE(bytes.read(begin + 10, out, 4));
    EXPECT_EQ(out[0], 10);
    EXPECT_EQ(out[3], 13);
    EXPECT_FALSE(bytes.read(begin + 98, out, 4));  // past its end
    EXPECT_FALSE(bytes.read(begin - 1, out, 1));
    EXPECT_EQ(bytes.read_some(begin + 97, out, 8), 3u);
    EXPECT_EQ(out[2], 99);
    EXPECT_EQ(bytes.read_some(begin + 100, out, 8), 0u);
  }
}

TEST(ObjectBytes, FollowsChangesOnlyThroughNewWindows) {
  // A large object is read a window at a time: bytes far from the last window
  // are fetched again, bytes inside it come from the copy.
  std::vector<unsigned char> data(1 << 16, 1);
  uintptr_t begin = reinterpret_cast<uintptr_t>(data.data());
  ObjectBytes bytes({begin, begin + data.size()}, false);
  unsigned char out = 0;
  ASSERT_TRUE(bytes.read(begin + 30000, &out, 1));
  data[30001] = 2;
  data[60000] = 3;
  ASSERT_TRUE(bytes.read(begin + 30001, &out, 1));
  EXPECT_EQ(out, 1);  // from the window
  ASSERT_TRUE(bytes.read(begin + 60000, &out, 1));
  EXPECT_EQ(out, 3);  // a new window
}

TEST(ObjectBytes, RefusesAnObjectThatIsNotMapped) {
  GuardedPages pages;
  // The object claims to extend into the inaccessible page.
  ObjectBytes bytes({pages.forbidden() - 16, pages.forbidden() + 64}, false);
  unsigned char out[8];
  EXPECT_FALSE(bytes.read(pages.forbidden() + 8, out, 8));
  ObjectBytes all_forbidden({pages.forbidden(), pages.forbidden() + 64}, false);
  EXPECT_FALSE(all_forbidden.read(pages.forbidden(), out, 8));
}

}  // namespace
}  // namespace nmprof::hotspot
