#include "agent/stacks/stack_table.h"

#include <gtest/gtest.h>

#include <vector>

namespace nmprof {
namespace {

CallStack stack_of(std::vector<CallFrame>& frames) {
  CallStack s{frames.data(), frames.size()};
  s.depth = frames.size();
  return s;
}

TEST(StackTable, EqualStacksShareAnIdAndDifferentOnesDoNot) {
  StackTable table;
  std::vector<CallFrame> a = {{0x1000, 0, 3, false}, {0x2000, 0, 3, false}};
  std::vector<CallFrame> b = {{0x1000, 0, 3, false}, {0x2001, 0, 3, false}};
  std::vector<CallFrame> c = {{0x1000, 0, 3, false}};
  bool added;
  uint32_t ia = table.intern(stack_of(a), added);
  EXPECT_TRUE(added);
  EXPECT_EQ(table.intern(stack_of(a), added), ia);
  EXPECT_FALSE(added);
  uint32_t ib = table.intern(stack_of(b), added);
  uint32_t ic = table.intern(stack_of(c), added);
  EXPECT_NE(ia, ib);
  EXPECT_NE(ia, ic);
  EXPECT_EQ(table.entry(ib).depth, 2);
  EXPECT_EQ(table.frames(table.entry(ib))[1].id, 0x2001u);
}

TEST(StackTable, TheSameAddressesInCodeOfAnotherLoadAreAnotherStack) {
  // A library unloaded and another loaded at its address: equal pcs, other functions.
  StackTable table;
  std::vector<CallFrame> first = {{0x1000, 0, 3, false, 2}, {0x2000, 0, 3, false, 1}};
  std::vector<CallFrame> second = {{0x1000, 0, 3, false, 3}, {0x2000, 0, 3, false, 1}};
  bool added;
  uint32_t a = table.intern(stack_of(first), added);
  uint32_t b = table.intern(stack_of(second), added);
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
  uint32_t a = table.intern(full, added);
  EXPECT_NE(table.intern(cut, added), a);
  EXPECT_NE(table.intern(stack_of(java), added), a);
}

TEST(StackTable, KeepsEveryStackThroughGrowth) {
  StackTable table;
  std::vector<uint32_t> ids;
  for (uint64_t i = 0; i < 50000; i++) {
    std::vector<CallFrame> f = {{i, 0, 3, false}, {i * 7, 0, 3, false}};
    bool added;
    ids.push_back(table.intern(stack_of(f), added));
    ASSERT_TRUE(added);
  }
  for (uint64_t i = 0; i < 50000; i++) {
    std::vector<CallFrame> f = {{i, 0, 3, false}, {i * 7, 0, 3, false}};
    bool added;
    ASSERT_EQ(table.intern(stack_of(f), added), ids[i]);
    ASSERT_FALSE(added);
  }
  EXPECT_EQ(table.size(), 50000u);
}

}  // namespace
}  // namespace nmprof
