#include "agent/stack_capture.h"

#include <pthread.h>

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

}  // namespace

const unwind::FrameTable* StackCapture::table_for(uintptr_t pc) const {
  const Module* m = modules_.find(pc);
  return m ? &m->frame_table() : nullptr;
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
  for (; first < walk.depth; first++) {
    const Module* m = modules_.find(pcs[first]);
    if (!m || !m->is_agent) break;
  }
  for (size_t i = first; i < walk.depth && !out.full(); i++) {
    const Module* m = modules_.find(pcs[i]);
    out.frames[out.depth++] = {pcs[i], 0, m && m->is_jvm ? jfr::schema::kCpp : jfr::schema::kNative};
  }
  out.truncated = walk.truncated() || walk.depth - first > out.depth;
}

}  // namespace nmprof
