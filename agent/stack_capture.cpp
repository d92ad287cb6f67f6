#include "agent/stack_capture.h"

#include <pthread.h>

// The start and end of the agent's own mapping, defined by the linker.
extern "C" const char __ehdr_start __attribute__((visibility("hidden")));
extern "C" const char _end __attribute__((visibility("hidden")));

namespace nmprof {
namespace {

// The walker may read [sp, stack_high) of this thread's stack: learn its bounds once.
bool know_stack_bounds(ThreadState& t) {
  if (t.stack_high) return true;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return false;
  void* low = nullptr;
  size_t size = 0;
  bool ok = pthread_attr_getstack(&attr, &low, &size) == 0 && low && size;
  pthread_attr_destroy(&attr);
  if (!ok) return false;
  t.stack_low = reinterpret_cast<uintptr_t>(low);
  t.stack_high = t.stack_low + size;
  return true;
}

// The agent's own frames are dropped: they lie in its mapping.
bool in_agent(uintptr_t pc) {
  return pc >= reinterpret_cast<uintptr_t>(&__ehdr_start) && pc < reinterpret_cast<uintptr_t>(&_end);
}

}  // namespace

const unwind::FrameTable* StackCapture::table_for(uintptr_t pc) const {
  ThreadState& t = t_state;
  const Module* m = t.last_module;
  uint64_t generation = modules_.generation();
  if (!m || t.last_module_generation != generation || !m->contains(pc)) {
    m = modules_.find(pc);
    t.last_module = m;
    t.last_module_generation = generation;
  }
  return m ? &m->frame_table() : nullptr;
}

bool StackCapture::find_row(uintptr_t pc, const unwind::FrameRow** row) const {
  RowCache* cache = t_state.row_cache;
  if (!cache) return FrameTableLookup::find_row(pc, row);
  uint64_t generation = modules_.generation();
  if (cache->generation != generation) {
    *cache = RowCache{generation, {}};
  }
  RowCache::Entry& e = cache->entries[(pc ^ (pc >> 7)) % RowCache::kEntries];
  if (e.pc == pc && pc != 0) {
    *row = e.row;
    return true;
  }
  if (!FrameTableLookup::find_row(pc, row)) return false;
  e = {pc, *row};
  return true;
}

void StackCapture::capture(ThreadState& t, CallStack& out, uintptr_t* pcs) {
  out.depth = 0;
  out.truncated = false;
  if (!know_stack_bounds(t)) return;
  unwind::Registers here = unwind::current_registers();
  // On a signal's alternate stack (or a coroutine's) the bounds do not apply.
  if (here.sp < t.stack_low || here.sp >= t.stack_high) return;
  unwind::StackWalk walk =
      unwind::walk_stack(here, t.stack_high, *this, std::span<uintptr_t>(pcs, out.capacity + kAgentFrames));
  size_t first = 0;
  while (first < walk.depth && in_agent(pcs[first])) first++;
  for (size_t i = first; i < walk.depth && !out.full(); i++)
    out.frames[out.depth++] = {pcs[i], 0, modules_.in_jvm(pcs[i]) ? jfr::schema::kCpp : jfr::schema::kNative};
  out.truncated = walk.truncated() || walk.depth - first > out.depth;
}

}  // namespace nmprof
