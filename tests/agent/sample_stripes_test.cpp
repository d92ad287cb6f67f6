#include "agent/recording/sample_stripes.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace nmprof {
namespace {

TEST(SampleStripes, AThreadWhoseStripeIsBusyTakesAnother) {
  SampleStripes stripes;
  SampleStripes::Stripe* first = stripes.acquire(1);
  // Thread 17 maps to the same stripe as thread 1.
  SampleStripes::Stripe* second = stripes.acquire(1 + SampleStripes::kStripes);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(first, second);
  stripes.release(first);
  stripes.release(second);
}

// A signal handler on a thread that holds every stripe gets none instead of waiting
// for itself; another thread waits for a stripe to come free.
TEST(SampleStripes, AThreadHoldingEveryStripeIsRefusedNotDeadlocked) {
  SampleStripes stripes;
  std::vector<SampleStripes::Stripe*> held;
  for (unsigned i = 0; i < SampleStripes::kStripes; i++) held.push_back(stripes.acquire(1));
  EXPECT_EQ(stripes.acquire(1), nullptr);
  EXPECT_TRUE(stripes.owned_by(1));
  SampleStripes::Stripe* waited = nullptr;
  std::thread other([&] { waited = stripes.acquire(2); });
  stripes.release(held.back());
  other.join();
  EXPECT_EQ(waited, held.back());
  stripes.release(waited);
  held.pop_back();
  for (auto* s : held) stripes.release(s);
  EXPECT_FALSE(stripes.owned_by(1));
}

TEST(SampleStripes, TheWriterTakesWhatAStripeHoldsAndLeavesItEmpty) {
  SampleStripes stripes;
  stripes.reset(7, 1);
  SampleStripes::Stripe* s = stripes.acquire(3);
  s->events.put_bytes("abc", 3);
  s->samples = 2;
  stripes.release(s);
  SampleStripes::Stripe into;
  ASSERT_TRUE(stripes.take(3, into, 1));
  EXPECT_EQ(into.events.size(), 3u);
  EXPECT_EQ(into.samples, 2u);
  EXPECT_EQ(into.generation, 7u);
  SampleStripes::Stripe again;
  ASSERT_TRUE(stripes.take(3, again, 1));
  EXPECT_EQ(again.events.size(), 0u);
  EXPECT_EQ(again.samples, 0u);
}

// From a signal handler: a stripe its own thread holds, or one held past the
// deadline, is skipped rather than waited for.
TEST(SampleStripes, TakingGivesUpOnAStripeItsThreadHoldsOrAfterTheDeadline) {
  SampleStripes stripes;
  SampleStripes::Stripe* s = stripes.acquire(5);
  SampleStripes::Stripe into;
  EXPECT_FALSE(stripes.take(5, into, 5));
  EXPECT_FALSE(stripes.take(5, into, 6, /*deadline=*/0));
  stripes.release(s);
  EXPECT_TRUE(stripes.take(5, into, 6, /*deadline=*/0));
}

}  // namespace
}  // namespace nmprof
