#include "agent/stacks/stack_table.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace nmprof {
namespace {

constexpr int kSelf = 1;  // the thread id the table's lock is taken with

CallStack stack_of(std::vector<CallFrame>& frames) {
  CallStack s{frames.data(), frames.size()};
  s.depth = frames.size();
  return s;
}

// Interns and tells whether the stack was new.
uint32_t intern(StackTable& table, const CallStack& stack, bool& added) {
  size_t before = table.size();
  uint32_t id = table.intern(stack, kSelf);
  added = table.size() > before;
  return id;
}

TEST(StackTable, EqualStacksShareAnIdAndDifferentOnesDoNot) {
  StackTable table;
  std::vector<CallFrame> a = {{0x1000, 0, 3, false}, {0x2000, 0, 3, false}};
  std::vector<CallFrame> b = {{0x1000, 0, 3, false}, {0x2001, 0, 3, false}};
  std::vector<CallFrame> c = {{0x1000, 0, 3, false}};
  bool added;
  uint32_t ia = intern(table, stack_of(a), added);
  EXPECT_TRUE(added);
  EXPECT_EQ(intern(table, stack_of(a), added), ia);
  EXPECT_FALSE(added);
  uint32_t ib = intern(table, stack_of(b), added);
  uint32_t ic = intern(table, stack_of(c), added);
  EXPECT_NE(ia, ib);
  EXPECT_NE(ia, ic);
  EXPECT_EQ(table.entry(ib).depth, 2);
  EXPECT_EQ(table.entry(ib).frames[1].id, 0x2001u);
}

TEST(StackTable, TheSameAddressesInCodeOfAnotherLoadAreAnotherStack) {
  // A library unloaded and another loaded at its address: equal pcs, other functions.
  StackTable table;
  std::vector<CallFrame> first = {{0x1000, 0, 3, false, 2}, {0x2000, 0, 3, false, 1}};
  std::vector<CallFrame> second = {{0x1000, 0, 3, false, 3}, {0x2000, 0, 3, false, 1}};
  bool added;
  uint32_t a = intern(table, stack_of(first), added);
  uint32_t b = intern(table, stack_of(second), added);
  EXPECT_TRUE(added);
  EXPECT_NE(a, b);
}

TEST(StackTable, TruncationAndFrameKindsAreDistinct) {
  StackTable table;
  std::vector<CallFrame> f = {{0x1000, 0, 3, false}};
  std::vector<CallFrame> java = {{0x1000, 0, 1, true}};
  CallStack full = stack_of(f);
  CallStack cut = stack_of(f);
  cut.truncated = true;
  bool added;
  uint32_t a = intern(table, full, added);
  EXPECT_NE(intern(table, cut, added), a);
  EXPECT_NE(intern(table, stack_of(java), added), a);
}

TEST(StackTable, KeepsEveryStackThroughGrowth) {
  StackTable table;
  std::vector<uint32_t> ids;
  for (uint64_t i = 0; i < 50000; i++) {
    std::vector<CallFrame> f = {{i, 0, 3, false}, {i * 7, 0, 3, false}};
    bool added;
    ids.push_back(intern(table, stack_of(f), added));
    ASSERT_TRUE(added);
  }
  for (uint64_t i = 0; i < 50000; i++) {
    std::vector<CallFrame> f = {{i, 0, 3, false}, {i * 7, 0, 3, false}};
    bool added;
    ASSERT_EQ(intern(table, stack_of(f), added), ids[i]);
    ASSERT_FALSE(added);
  }
  EXPECT_EQ(table.size(), 50000u);
}

// Known stacks are found without the table's lock: a thread that holds it (as a
// signal handler's interrupted code would) still finds them, and gets 0 for new ones.
TEST(StackTable, KnownStacksAreFoundWhileTheLockIsHeld) {
  StackTable table;
  std::vector<CallFrame> known = {{0x1000, 0, 3, false}};
  std::vector<CallFrame> fresh = {{0x3000, 0, 3, false}};
  uint32_t id = table.intern(stack_of(known), kSelf);
  table.before_fork(kSelf);
  EXPECT_EQ(table.intern(stack_of(known), kSelf), id);
  EXPECT_EQ(table.intern(stack_of(fresh), kSelf), 0u);
  table.after_fork();
  EXPECT_NE(table.intern(stack_of(fresh), kSelf), 0u);
}

// Threads adding overlapping sets of stacks through several growths agree on every id.
TEST(StackTable, ThreadsAgreeOnIdsWhileTheTableGrows) {
  StackTable table;
  constexpr int kThreads = 4, kStacks = 20000;
  std::vector<std::vector<uint32_t>> ids(kThreads, std::vector<uint32_t>(kStacks));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kStacks; i++) {
        int n = (i * 7919 + t * 104729) % kStacks;  // each thread in its own order
        std::vector<CallFrame> f = {{uint64_t(n), 0, 3, false}, {uint64_t(n) * 13, 0, 3, false}};
        ids[t][n] = table.intern(stack_of(f), t + 1);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(table.size(), size_t(kStacks));
  for (int t = 1; t < kThreads; t++) EXPECT_EQ(ids[t], ids[0]);
  for (int i = 0; i < kStacks; i++) ASSERT_NE(ids[0][i], 0u);
}

}  // namespace
}  // namespace nmprof
