// PHP in this process, as the agent profiles it: the engine found when the agent
// was preloaded, its heap's handlers installed once the heap exists (the engine
// makes it during its startup, after the agent started), and the reader of its
// call frames when their layout is known.
#pragma once

#include <atomic>

#include "agent/php/php_stacks.h"
#include "agent/php/zend_engine.h"

namespace nmprof::php {

class PhpRuntime {
 public:
  // Preloaded, on the main thread (the one an NTS CLI engine runs on). Says in one
  // line what cannot be profiled on this engine.
  void find(int engine_thread);
  // Called at checkpoints (PHP calls sysconf right after making its heap, and
  // loads its extensions after that): installs the heap handlers once in the CLI,
  // or for each request in a server (php_requests.h).
  void checkpoint();
  // Gives the engine back its heap handlers and SAPI callbacks.
  void stop();
  // After stop(): installs them again at the next checkpoint.
  void rearm() { heap_pending_.store(found_ && zend_.heap_hookable, std::memory_order_release); }
  // The engine's thread forked (php-fpm's workers): its frames are read in the child.
  void after_fork_in_child(int parent_tid, int child_tid);
  bool waiting_for_heap() const { return heap_pending_.load(std::memory_order_relaxed); }
  // The engine's version ("8.2", "unknown"), null when this process runs no PHP.
  const char* version() const { return found_ ? version_name(zend_.version) : nullptr; }
  // Null when PHP frames cannot be read.
  PhpStacks* stacks() const { return stacks_.load(std::memory_order_acquire); }

 private:
  ZendEngine zend_{};
  bool found_ = false;
  std::atomic<bool> heap_pending_{false};
  std::atomic<PhpStacks*> stacks_{nullptr};
};

}  // namespace nmprof::php
