#include "agent/stacks/stack_capture.h"

#include "agent/stacks/thread_scratch.h"

#include <pthread.h>
#include <unistd.h>

// The start and end of the agent's own mapping, defined by the linker.
extern "C" const char __ehdr_start __attribute__((visibility("hidden")));
extern "C" const char _end __attribute__((visibility("hidden")));
// The stack pointer at process start, from the dynamic linker.
extern "C" void* __libc_stack_end;

namespace nmprof {
namespace {

// Where this thread's stack ends (its highest address), found without a lock, a
// call into libc or a system call: pthread_getattr_np takes the thread's own lock,
// and the hook may run inside pthread code that holds it (it calls calloc). glibc
// puts a thread's descriptor, pthread_self(), right above the stack it allocated (or
// was given); the main thread's frames all lie below __libc_stack_end, the sp at
// process start (its descriptor is in static TLS, nowhere near its stack).
constexpr uintptr_t kMaxStack = uintptr_t{1} << 30;

uintptr_t stack_end_of_this_thread(ThreadState& t, uintptr_t sp) {
  auto descriptor = static_cast<uintptr_t>(pthread_self());
  if (descriptor > sp && descriptor - sp < kMaxStack) return descriptor;
  bool main_thread = g_process_id ? t.id() == g_process_id : getpid() == t.id();
  return main_thread ? reinterpret_cast<uintptr_t>(__libc_stack_end) : 0;
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
  if (!t_state.scratch) return FrameTableLookup::find_row(pc, row);
  RowCache* cache = &t_state.scratch->rows();
  uint64_t generation = modules_.generation();
  if (cache->generation != generation) {
    *cache = RowCache{generation, {}};
  }
  static_assert(RowCache::kEntries == 64);
  RowCache::Entry& e = cache->entries[(pc * 0x9E3779B97F4A7C15ull) >> 58];
  if (e.pc == pc && pc != 0) {
    *row = e.row;
    return true;
  }
  if (!FrameTableLookup::find_row(pc, row)) return false;
  e = {pc, *row};
  return true;
}

NativeWalkEnd StackCapture::capture(ThreadState& t, const unwind::Registers& caller, CallStack& out, uintptr_t* pcs) {
  out.depth = 0;
  out.truncated = false;
  NativeWalkEnd end;
  if (!t.stack_high) t.stack_high = stack_end_of_this_thread(t, caller.sp);
  // On a signal's alternate stack (or a coroutine's) the bound does not apply.
  if (caller.sp >= t.stack_high || t.stack_high - caller.sp >= kMaxStack) return end;
  unwind::StackWalk walk = unwind::walk_stack(caller, t.stack_high, *this,
                                              std::span<uintptr_t>(pcs, out.capacity + kAgentFrames),
                                              unwind::FirstPc::kReturnAddress);
  size_t first = 0;
  while (first < walk.depth && in_agent(pcs[first])) first++;
  const Module* m = nullptr;
  for (size_t i = first; i < walk.depth && !out.full(); i++) {
    if (!m || !m->contains(pcs[i])) m = modules_.find(pcs[i]);
    out.frames[out.depth++] = {pcs[i], 0, m && m->is_jvm ? jfr::schema::kCpp : jfr::schema::kNative, false,
                               m ? m->load : uint16_t{0}};
  }
  out.truncated = walk.truncated() || walk.depth - first > out.depth;
  end.in_unknown_code = walk.stop == unwind::WalkStop::kUnknownCode;
  end.registers = walk.stopped_at;
  return end;
}

}  // namespace nmprof
