#include "agent/recording/thread_context.h"

#include <pthread.h>

#include <cstdlib>
#include <cstring>

#include "agent/safety/spin_lock.h"
#include "agent/hooks/thread_state.h"

namespace nmprof {
namespace {

// nmprof.h keeps a thread's block in its own thread-local variable, which the agent
// cannot clear: a block is never freed, and an exited thread's block goes to the
// next new thread instead.
struct Slot {
  nmprof_context_block block;
  Slot* next_free;
};

nmprof_attribute_names g_names;
pthread_key_t g_key;
pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
bool g_key_made = false;
SpinLock g_free_lock;
Slot* g_free = nullptr;

void release_block(void* block) {
  t_state.context = nullptr;
  auto* slot = static_cast<Slot*>(block);
  g_free_lock.lock(t_state.id());
  slot->next_free = g_free;
  g_free = slot;
  g_free_lock.unlock();
}

Slot* reused_slot() {
  g_free_lock.lock(t_state.id());
  Slot* slot = g_free;
  if (slot) g_free = slot->next_free;
  g_free_lock.unlock();
  return slot;
}

void make_key() { g_key_made = pthread_key_create(&g_key, release_block) == 0; }

}  // namespace

void declare_context_attributes(const std::vector<std::string>& names) {
  uint32_t count = 0;
  for (const std::string& name : names) {
    if (count == NMPROF_MAX_ATTRIBUTES) break;
    // Names are checked to fit when the options are parsed.
    strncpy(g_names.names[count], name.c_str(), NMPROF_ATTRIBUTE_SIZE - 1);
    count++;
  }
  __atomic_store_n(&g_names.count, count, __ATOMIC_RELEASE);
}

int declared_attribute_index(const char* name) {
  uint32_t count = __atomic_load_n(&g_names.count, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < count; i++)
    if (strcmp(g_names.names[i], name) == 0) return static_cast<int>(i);
  __atomic_fetch_add(&g_names.undeclared, 1, __ATOMIC_RELAXED);
  return -1;
}

void reset_context_lock_after_fork() { g_free_lock.unlock(); }

uint64_t undeclared_context_attributes() { return __atomic_load_n(&g_names.undeclared, __ATOMIC_RELAXED); }

nmprof_context_block* context_of_this_thread() {
  ThreadState& t = t_state;
  if (t.context) return t.context;
  AgentGuard guard;  // the block is the agent's, not the host's
  pthread_once(&g_key_once, make_key);
  if (!g_key_made) return nullptr;
  Slot* slot = reused_slot();
  if (slot) {
    memset(&slot->block, 0, sizeof slot->block);
  } else if (!(slot = static_cast<Slot*>(calloc(1, sizeof(Slot))))) {
    return nullptr;
  }
  slot->block.attributes = &g_names;
  pthread_setspecific(g_key, slot);
  t.context = &slot->block;
  return t.context;
}

}  // namespace nmprof
