#include "agent/safety/agent_memory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace nmprof {
namespace {

TEST(AgentMemory, BlocksAreAlignedWritableAndOwned) {
  std::vector<void*> blocks;
  for (size_t size : {1ul, 15ul, 16ul, 17ul, 100ul, 4096ul, 65536ul, 262128ul, 262129ul, 5ul << 20}) {
    void* p = agent_memory::allocate(size);
    ASSERT_NE(p, nullptr) << size;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u) << size;
    memset(p, 0xab, size);
    EXPECT_TRUE(agent_memory::owns(p)) << size;
    blocks.push_back(p);
  }
  for (void* p : blocks) agent_memory::release(p);
}

TEST(AgentMemory, HostBlocksAreNotOwned) {
  void* host = calloc(1, 64);  // libc's: the unit tests do not link the agent's malloc
  EXPECT_FALSE(agent_memory::owns(host));
  free(host);
  void* big = malloc(1 << 20);
  EXPECT_FALSE(agent_memory::owns(big));
  free(big);
  EXPECT_FALSE(agent_memory::owns(nullptr));
}

TEST(AgentMemory, ReleasedBlocksAreReused) {
  void* a = agent_memory::allocate(200);
  agent_memory::release(a);
  EXPECT_FALSE(agent_memory::owns(a));  // released: no longer taken for a live block
  void* b = agent_memory::allocate(200);
  EXPECT_EQ(a, b);
  agent_memory::release(b);
}

TEST(AgentMemory, ZeroedEvenWhenReused) {
  auto* a = static_cast<unsigned char*>(agent_memory::allocate(300));
  memset(a, 0xff, 300);
  agent_memory::release(a);
  auto* b = static_cast<unsigned char*>(agent_memory::allocate_zeroed(300));
  ASSERT_NE(b, nullptr);
  for (int i = 0; i < 300; i++) ASSERT_EQ(b[i], 0) << i;
  agent_memory::release(b);
}

TEST(AgentMemory, ReallocateKeepsContentAcrossClassesAndMappings) {
  auto* p = static_cast<unsigned char*>(agent_memory::allocate(10));
  for (int i = 0; i < 10; i++) p[i] = static_cast<unsigned char>(i);
  for (size_t size : {100ul, 5000ul, 300000ul, 3000000ul, 50ul}) {
    p = static_cast<unsigned char*>(agent_memory::reallocate(p, size));
    ASSERT_NE(p, nullptr);
    for (int i = 0; i < 10; i++) ASSERT_EQ(p[i], i) << size;
  }
  agent_memory::release(p);
}

TEST(AgentMemory, OverAlignedBlocks) {
  for (size_t align : {32ul, 64ul, 4096ul}) {
    void* p = agent_memory::allocate(100, align);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u);
    EXPECT_TRUE(agent_memory::owns(p));
    agent_memory::release(p);
  }
  EXPECT_EQ(agent_memory::allocate(100, 48), nullptr);  // not a power of two
}

TEST(AgentMemory, ThreadsAllocatingAtOnce) {
  // Each thread fills its blocks with its own number: a block handed to two threads
  // at once would show the other's.
  std::vector<std::thread> threads;
  for (uint32_t t = 1; t <= 4; t++) {
    threads.emplace_back([t] {
      std::vector<std::pair<uint32_t*, size_t>> mine;
      for (size_t i = 0; i < 20000; i++) {
        size_t words = 1 + i % 64;
        auto* p = static_cast<uint32_t*>(agent_memory::allocate(words * sizeof(uint32_t)));
        ASSERT_NE(p, nullptr);
        std::fill(p, p + words, t);
        mine.emplace_back(p, words);
        if (i % 2) {
          auto [q, n] = mine[i % mine.size()];
          ASSERT_EQ(std::count(q, q + n, t), static_cast<long>(n));
          agent_memory::release(q);
          mine.erase(mine.begin() + static_cast<long>(i % mine.size()));
        }
      }
      for (auto [q, n] : mine) {
        ASSERT_EQ(std::count(q, q + n, t), static_cast<long>(n));
        agent_memory::release(q);
      }
    });
  }
  for (auto& thread : threads) thread.join();
}

}  // namespace
}  // namespace nmprof
