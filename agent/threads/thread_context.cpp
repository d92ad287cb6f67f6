#include "agent/threads/thread_context.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <cstdlib>
#include <cstring>

#include "agent/safety/spin_lock.h"
#include "agent/threads/thread_state.h"

namespace nmprof {
namespace {

// nmprof.h keeps a thread's block in its own thread-local variable, which the agent
// cannot clear: a block is never freed. When its thread exits, it is retired, and
// goes to a new thread only once the old one is gone: until then the old thread may
// still set its context through that variable (a pthread key destructor of the
// program's that runs after the agent's), and it would write into the new owner's.
struct Slot {
  nmprof_context_block block;
  Slot* next;
  int owner;  // the tid of the thread that had it
};

nmprof_attribute_names g_names;
pthread_key_t g_key;
pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
bool g_key_made = false;
SpinLock g_retired_lock;
Slot* g_retired = nullptr;

// Its thread's thread-local variables are gone with it. (A tid in use again says
// "alive": the block waits a little longer.) The host's errno is left as it was.
bool thread_gone(int tid) {
  int saved = errno;
  bool gone = tgkill(getpid(), tid, 0) != 0 && errno == ESRCH;
  errno = saved;
  return gone;
}

// The block stays the thread's own: its later key destructors may still set and
// sample its context.
void retire_block(void* block) {
  auto* slot = static_cast<Slot*>(block);
  slot->owner = t_state.id();
  g_retired_lock.lock(t_state.id());
  slot->next = g_retired;
  g_retired = slot;
  g_retired_lock.unlock();
}

// A retired block whose thread is gone, or null. The list is looked at outside the
// lock (a system call per block), then what stays is put back.
Slot* reused_slot() {
  int self = t_state.id();
  g_retired_lock.lock(self);
  Slot* list = g_retired;
  g_retired = nullptr;
  g_retired_lock.unlock();
  Slot* found = nullptr;
  Slot** link = &list;
  for (Slot* s = list; s; s = s->next) {
    if (thread_gone(s->owner)) {
      *link = s->next;
      found = s;
      break;
    }
    link = &s->next;
  }
  if (!list) return found;
  Slot* last = list;
  while (last->next) last = last->next;
  g_retired_lock.lock(self);
  last->next = g_retired;
  g_retired = list;
  g_retired_lock.unlock();
  return found;
}

void make_key() { g_key_made = pthread_key_create(&g_key, retire_block) == 0; }

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

void reset_context_lock_after_fork() { g_retired_lock.unlock(); }

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
