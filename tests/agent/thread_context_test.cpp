// nmprof.h's per-thread blocks: made on first use, recycled (never freed) once their
// thread is gone, and handed out clean.
#include <gtest/gtest.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <unistd.h>

#include <thread>

#include "agent/threads/thread_context.h"
#include "agent/threads/thread_state.h"

namespace nmprof {
namespace {

// pthread_join returns once the thread cleared its tid, a moment before the kernel
// lets it go.
void wait_until_gone(int tid) {
  while (tgkill(getpid(), tid, 0) == 0) usleep(100);
}

TEST(ThreadContext, AnExitedThreadsBlockGoesCleanToTheNextThread) {
  declare_context_attributes({"route"});
  nmprof_context_block* first = nullptr;
  int tid = 0;
  std::thread([&] {
    tid = t_state.id();
    first = context_of_this_thread();
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(context_of_this_thread(), first);
    EXPECT_EQ(t_state.context, first);
    first->span_id = 42;
    first->value_length[0] = 3;
  }).join();
  wait_until_gone(tid);
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

// A pthread key destructor of the program's runs after the agent's (its key is
// younger) and may still set the context through nmprof.h's cached pointer: a
// thread starting meanwhile must not get that block (it did: the span of one went
// into the other's samples).
sem_t g_released, g_started;
nmprof_context_block* g_exiting_block = nullptr;

void hold_exiting_thread(void*) {
  sem_post(&g_released);
  sem_wait(&g_started);
  g_exiting_block->span_id = 1;  // what nmprof_context_set does with its cached pointer
  EXPECT_EQ(t_state.context, g_exiting_block);  // still this thread's, for its samples
}

TEST(ThreadContext, AnExitingThreadsBlockWaitsUntilTheThreadIsGone) {
  context_of_this_thread();  // the agent's key first
  pthread_key_t key;
  ASSERT_EQ(pthread_key_create(&key, hold_exiting_thread), 0);
  sem_init(&g_released, 0, 0);
  sem_init(&g_started, 0, 0);
  std::thread exiting([&] {
    g_exiting_block = context_of_this_thread();
    pthread_setspecific(key, &key);
  });
  sem_wait(&g_released);
  nmprof_context_block* next = nullptr;
  std::thread([&] {
    next = context_of_this_thread();
    next->span_id = 2;
    sem_post(&g_started);
  }).join();
  exiting.join();
  EXPECT_NE(next, g_exiting_block);
  EXPECT_EQ(next->span_id, 2u);
  pthread_key_delete(key);
}

}  // namespace
}  // namespace nmprof
