// The PHP part of a sampled stack: the engine's frames (executor_globals'
// current_execute_data and its callers), joined below the native frames of the
// allocation at the executor, as Java frames are joined in a JVM. Runs on the
// sampled path: plain reads of the current thread's frames, no call into the
// engine, no lock, no allocation.
#pragma once

#include <cstdint>

#include "agent/php/engine_memory.h"
#include "agent/php/zend_layout.h"
#include "agent/stacks/call_stack.h"
#include "agent/threads/thread_state.h"

namespace nmprof::php {

// How a frame of a file's top-level code was entered, kept in the low bits of its
// frame id (zend_function pointers are 8-byte aligned).
enum class FileEntry : uint8_t { None, Include, IncludeOnce, Require, RequireOnce, Eval };
constexpr uint64_t kFileEntryMask = 7;

class PhpStacks {
 public:
  // executor_globals of an NTS PHP 8.2 engine; the executor's code (execute_ex) at
  // [executor_begin, executor_end): native frames end there and PHP frames begin.
  // An NTS engine runs PHP code on one thread, `engine_thread`: the frames are
  // read there only (another thread would see them change under it).
  PhpStacks(uintptr_t executor_globals, uintptr_t executor_begin, uintptr_t executor_end, int engine_thread)
      : executor_globals_(executor_globals),
        executor_begin_(executor_begin),
        executor_end_(executor_end),
        engine_thread_(engine_thread) {}

  // Null when the executor's code cannot be found (then there are no PHP frames).
  static PhpStacks* create(void* executor_globals, int engine_thread);

  void append(ThreadState& t, CallStack& stack);
  // A server's engine: see shutdown_began.
  void serve_requests() { serving_ = true; }
  void after_fork_in_child(int parent_tid, int child_tid) {
    if (engine_thread_ == parent_tid) engine_thread_ = child_tid;
  }
  // The CLI is ending its one request: on the engine's thread, php_request_shutdown
  // has begun (it sets EG_FLAGS_IN_SHUTDOWN before the shutdown functions, the
  // destructors of what globals held, and the engine's cleanup; init_executor clears
  // it). Whether a sample happened to see PHP code run before does not matter: a
  // short script's end would otherwise be told apart in some runs and not others.
  // Returns when the shutdown was first seen here (ticks), 0 when it has not begun:
  // the blocks allocated before then are what the script held when its last line
  // ran. A server's requests are not told apart this way.
  uint64_t shutdown_began(ThreadState& t);

 private:
  size_t executor_frame(const CallStack& stack) const;

  uintptr_t executor_globals_;
  uintptr_t executor_begin_;
  uintptr_t executor_end_;
  int engine_thread_;
  bool serving_ = false;
  uint64_t shutdown_began_ = 0;   // written and read on the engine's thread only
};

}  // namespace nmprof::php
