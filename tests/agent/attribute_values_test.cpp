// The table of context attribute values: one id per distinct value, found again
// without a lock, agreed on by threads that add the same values at once, and
// bounded (0 past its size: the caller writes the value inline). Built with
// -DNMPROF_SANITIZE=thread, ThreadSanitizer checks the concurrent test for races.
#include "agent/recording/attribute_values.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace nmprof {
namespace {

TEST(AttributeValues, AValueKeepsItsId) {
  AttributeValues values;
  uint32_t checkout = values.intern("/checkout");
  uint32_t search = values.intern("/search");
  EXPECT_NE(checkout, 0u);
  EXPECT_NE(search, 0u);
  EXPECT_NE(checkout, search);
  EXPECT_EQ(values.intern(std::string("/checkout")), checkout);
  EXPECT_EQ(values.entry(checkout).value(), "/checkout");
  EXPECT_EQ(values.entry(search).value(), "/search");
  // Values that share a prefix, or differ past the first eight bytes, are distinct.
  EXPECT_NE(values.intern("/checkou"), checkout);
  EXPECT_NE(values.intern("/checkout/a"), values.intern("/checkout/b"));
  EXPECT_GT(values.memory_bytes(), 0u);
}

TEST(AttributeValues, TakesValuesOfOneToSixtyThreeBytes) {
  AttributeValues values;
  EXPECT_EQ(values.intern(""), 0u);
  std::string longest(AttributeValues::kMaxLength, 'x');
  uint32_t id = values.intern(longest);
  ASSERT_NE(id, 0u);
  EXPECT_EQ(values.entry(id).value(), longest);
  EXPECT_EQ(values.intern(longest + "x"), 0u);
}

TEST(AttributeValues, AFullTableKeepsItsValuesAndTakesNoMore) {
  AttributeValues values;
  std::set<uint32_t> ids;
  for (size_t i = 0; i < AttributeValues::kMaxValues; i++) ids.insert(values.intern("value-" + std::to_string(i)));
  EXPECT_EQ(ids.size(), AttributeValues::kMaxValues);
  EXPECT_EQ(ids.count(0), 0u);
  EXPECT_EQ(values.intern("one more"), 0u);
  EXPECT_EQ(values.intern("value-7"), values.intern("value-7"));
  EXPECT_EQ(values.entry(values.intern("value-7")).value(), "value-7");
}

TEST(AttributeValues, ThreadsAddingTheSameValuesAtOnceAgreeOnTheirIds) {
  constexpr int kThreads = 4;
  constexpr int kValues = 3000;
  AttributeValues values;
  std::vector<std::vector<uint32_t>> seen(kThreads, std::vector<uint32_t>(kValues));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++)
    threads.emplace_back([&, t] {
      std::vector<int> order(kValues);
      for (int i = 0; i < kValues; i++) order[i] = i;
      std::shuffle(order.begin(), order.end(), std::mt19937(t));
      for (int i : order) seen[t][i] = values.intern("tenant-" + std::to_string(i));
    });
  for (std::thread& t : threads) t.join();
  std::set<uint32_t> distinct;
  for (int i = 0; i < kValues; i++) {
    ASSERT_NE(seen[0][i], 0u);
    for (int t = 1; t < kThreads; t++) ASSERT_EQ(seen[t][i], seen[0][i]) << i;
    EXPECT_EQ(values.entry(seen[0][i]).value(), "tenant-" + std::to_string(i));
    distinct.insert(seen[0][i]);
  }
  EXPECT_EQ(distinct.size(), size_t(kValues));
}

}  // namespace
}  // namespace nmprof
