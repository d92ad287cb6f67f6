#include "agent/stacks/thread_scratch.h"

#include <pthread.h>

#include <cstdlib>
#include <new>

#include "agent/threads/thread_state.h"

namespace nmprof {
namespace {

pthread_key_t g_key;

void free_scratch(void* p) {
  t_state.scratch = nullptr;
  free(p);
}

}  // namespace

bool ThreadScratch::init() { return pthread_key_create(&g_key, free_scratch) == 0; }

ThreadScratch* ThreadScratch::of_this_thread(size_t depth) {
  ThreadState& t = t_state;
  if (!t.scratch) {
    void* p = calloc(1, bytes_for(depth));
    if (!p) return nullptr;
    auto* scratch = new (p) ThreadScratch;
    scratch->depth_ = depth;
    t.scratch = scratch;
    pthread_setspecific(g_key, p);
  }
  return t.scratch;
}

}  // namespace nmprof
