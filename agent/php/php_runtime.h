// PHP in this process, as the agent profiles it (runtime.h): the engine found when
// the agent was preloaded, its heap's handlers installed once the heap exists (the
// engine makes it during its startup, after the agent started), and the reader of
// its call frames when their layout is known.
#pragma once

#include <atomic>

#include "agent/php/php_frames.h"
#include "agent/php/php_stacks.h"
#include "agent/php/zend_engine.h"
#include "agent/runtime.h"

namespace nmprof::php {

class PhpRuntime : public Runtime {
 public:
  // Frames other than PHP's are named by `native`.
  explicit PhpRuntime(FrameResolver& native) : resolver_(native) {}

  // Preloaded, on the main thread (the one an NTS CLI engine runs on). Says in one
  // line what cannot be profiled on this engine.
  void find(int engine_thread) override;
  bool found() const override { return found_; }
  // Called at checkpoints (PHP calls sysconf right after making its heap, and
  // loads its extensions after that): installs the heap handlers once in the CLI,
  // or for each request in a server (php_requests.h).
  void checkpoint() override;
  bool checkpoint_due() const override { return heap_pending_.load(std::memory_order_relaxed); }
  // Gives the engine back its heap handlers and SAPI callbacks.
  void stop() override;
  // After stop(): installs them again at the next checkpoint.
  void rearm() override { heap_pending_.store(found_ && zend_.heap_hookable, std::memory_order_release); }
  // The engine's thread forked (php-fpm's workers): its frames are read in the child.
  void after_fork_in_child(int parent_tid, int child_tid) override;
  // The engine's version ("8.2", "unknown"), null when this process runs no PHP.
  const char* version() const { return found_ ? version_name(zend_.version) : nullptr; }
  // "PHP 8.2".
  std::string description() const override;
  void append_frames(ThreadState& t, const NativeWalkEnd& end, CallStack& stack, ThreadScratch& scratch) override;
  // What the engine frees in its request cleanup, the PHP script still held when
  // it ended: the live view shows it (ZendMM on or off).
  uint64_t leftovers_born_before(ThreadState& t) override;
  FrameResolver* frame_resolver() override { return &resolver_; }

 private:
  ZendEngine zend_{};
  bool found_ = false;
  std::atomic<bool> heap_pending_{false};
  std::atomic<PhpStacks*> stacks_{nullptr};  // null when PHP frames cannot be read
  PhpFrameResolver resolver_;
};

}  // namespace nmprof::php
