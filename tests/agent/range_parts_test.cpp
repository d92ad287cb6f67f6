// How a program's close_range/closefrom is split around the agent's descriptors.
#include "agent/safety/range_parts.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>
#include <vector>

namespace nmprof {
namespace {

std::vector<std::pair<unsigned, unsigned>> parts(unsigned first, unsigned last, std::initializer_list<unsigned> out) {
  std::vector<unsigned> excluded(out);
  std::vector<RangePart> found(excluded.size() + 1);
  size_t count = range_parts(first, last, excluded, found.data());
  std::vector<std::pair<unsigned, unsigned>> result;
  for (size_t i = 0; i < count; i++) result.emplace_back(found[i].first, found[i].last);
  return result;
}

using Parts = std::vector<std::pair<unsigned, unsigned>>;

TEST(RangeParts, NothingTakenOutLeavesTheRange) {
  EXPECT_EQ(parts(3, ~0U, {}), (Parts{{3, ~0U}}));
  EXPECT_EQ(parts(3, ~0U, {0, 2}), (Parts{{3, ~0U}}));  // below the range
  EXPECT_EQ(parts(3, 10, {11, 4000}), (Parts{{3, 10}}));
}

TEST(RangeParts, OneNumberInsideSplitsTheRangeInTwo) {
  EXPECT_EQ(parts(3, ~0U, {960}), (Parts{{3, 959}, {961, ~0U}}));
}

TEST(RangeParts, NumbersAtTheEdgesShortenIt) {
  EXPECT_EQ(parts(3, 1023, {3}), (Parts{{4, 1023}}));
  EXPECT_EQ(parts(3, 1023, {1023}), (Parts{{3, 1022}}));
  EXPECT_EQ(parts(3, ~0U, {~0U}), (Parts{{3, ~0U - 1}}));
  EXPECT_EQ(parts(7, 7, {7}), Parts{});
}

TEST(RangeParts, SeveralInAnyOrderWithRepeatsAndNeighbours) {
  EXPECT_EQ(parts(0, 100, {50, 10, 11, 50, 99}), (Parts{{0, 9}, {12, 49}, {51, 98}, {100, 100}}));
  EXPECT_EQ(parts(3, 6, {4, 5, 3, 6}), Parts{});
}

}  // namespace
}  // namespace nmprof
