// Per-thread agent state in initial-exec TLS: the hooks' fast path reads one field
// of it without any call, lock or allocation.
#pragma once

#include <unistd.h>

#include <cstdint>

struct nmprof_context_block;

namespace nmprof {

struct Module;
class ThreadScratch;
struct JavaThreadInfo;

// A countdown that no allocation can exhaust: set while the agent itself runs.
constexpr int64_t kNeverSample = INT64_MAX / 2;

struct ThreadState {
  int64_t bytes_until_sample;  // hot: hooks subtract each size; <= 0 takes the sampled path
  uint64_t random;             // xorshift state; 0 until the thread's first sampled-path visit
  uint64_t gap_interval;       // the sampling interval bytes_until_sample was drawn with
  int64_t saved_countdown;     // bytes_until_sample while an AgentGuard is active
  int guard_depth;
  int tid_;  // 0 until id() first asks; reset by the recorder after fork()
  uint32_t recorder_generation;  // generation of the recorder the cached thread entry belongs to
  uint32_t thread_entry;         // the recorder's entry for this thread
  const JavaThreadInfo* thread_entry_java;  // the Java identity that entry was made with
  uintptr_t stack_high;          // the end of the stack the walker may read, 0 until known
  ThreadScratch* scratch;  // where this thread's stacks are captured
  // In a JVM: the thread's JNIEnv (for AsyncGetCallTrace) and its Java identity,
  // both set when the VM tells the agent about the thread.
  void* jni_env;
  const JavaThreadInfo* java_thread;
  // The module of the last frame unwound: consecutive frames mostly share one.
  const Module* last_module;
  uint64_t last_module_generation;
  // nmprof.h's context of this thread, null until its code first sets one.
  nmprof_context_block* context;

  // This thread's OS id (never 0: the recorder's lock tells owners apart by it).
  int id() {
    if (tid_ == 0) tid_ = static_cast<int>(gettid());
    return tid_;
  }
};

extern __thread ThreadState t_state __attribute__((tls_model("initial-exec")));

// This process's id, as the agent last learned it (at start, and in a fork's child):
// a thread whose id it is is the main thread, told without a system call.
extern int g_process_id;

// While alive, allocations made on this thread are the agent's own: they are never
// sampled, so nothing the agent does is counted as the host's.
class AgentGuard {
 public:
  AgentGuard() {
    ThreadState& t = t_state;
    if (t.guard_depth++ == 0) {
      t.saved_countdown = t.bytes_until_sample;
      t.bytes_until_sample = kNeverSample;
    }
  }
  ~AgentGuard() {
    ThreadState& t = t_state;
    if (--t.guard_depth == 0) t.bytes_until_sample = t.saved_countdown;
  }
  AgentGuard(const AgentGuard&) = delete;
  AgentGuard& operator=(const AgentGuard&) = delete;
};

}  // namespace nmprof
