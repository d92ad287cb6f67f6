#include "agent/thread_context.h"

#include <pthread.h>

#include <cstdlib>
#include <cstring>

#include "agent/thread_state.h"

namespace nmprof {
namespace {

nmprof_attribute_names g_names;
pthread_key_t g_key;
pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
bool g_key_made = false;

void free_block(void* block) {
  t_state.context = nullptr;
  free(block);
}

void make_key() { g_key_made = pthread_key_create(&g_key, free_block) == 0; }

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

uint64_t undeclared_context_attributes() { return __atomic_load_n(&g_names.undeclared, __ATOMIC_RELAXED); }

nmprof_context_block* context_of_this_thread() {
  ThreadState& t = t_state;
  if (t.context) return t.context;
  AgentGuard guard;  // the block is the agent's, not the host's
  pthread_once(&g_key_once, make_key);
  if (!g_key_made) return nullptr;
  auto* block = static_cast<nmprof_context_block*>(calloc(1, sizeof(nmprof_context_block)));
  if (!block) return nullptr;
  block->attributes = &g_names;
  pthread_setspecific(g_key, block);
  t.context = block;
  return block;
}

}  // namespace nmprof
