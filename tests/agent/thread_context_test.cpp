// nmprof.h's per-thread blocks: made on first use, recycled (never freed) when a
// thread exits, and handed out clean.
#include <gtest/gtest.h>

#include <thread>

#include "agent/recording/thread_context.h"
#include "agent/hooks/thread_state.h"

namespace nmprof {
namespace {

TEST(ThreadContext, AnExitedThreadsBlockGoesCleanToTheNextThread) {
  declare_context_attributes({"route"});
  nmprof_context_block* first = nullptr;
  std::thread([&] {
    first = context_of_this_thread();
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(context_of_this_thread(), first);
    EXPECT_EQ(t_state.context, first);
    first->span_id = 42;
    first->value_length[0] = 3;
  }).join();
  nmprof_context_block* second = nullptr;
  std::thread([&] { second = context_of_this_thread(); }).join();
  EXPECT_EQ(second, first);
  EXPECT_EQ(second->span_id, 0u);
  EXPECT_EQ(second->value_length[0], 0);
  ASSERT_NE(second->attributes, nullptr);
  EXPECT_EQ(second->attributes->count, 1u);
  EXPECT_STREQ(second->attributes->names[0], "route");
}

TEST(ThreadContext, LiveThreadsHaveBlocksOfTheirOwn) {
  nmprof_context_block* mine = context_of_this_thread();
  nmprof_context_block* other = nullptr;
  std::thread([&] { other = context_of_this_thread(); }).join();
  EXPECT_NE(mine, other);
}

}  // namespace
}  // namespace nmprof
