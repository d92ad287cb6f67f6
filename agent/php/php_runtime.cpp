#include "agent/php/php_runtime.h"

#include "agent/log.h"
#include <cstring>

#include "agent/php/php_functions.h"
#include "agent/php/php_requests.h"
#include "agent/php/zend_heap_hooks.h"

namespace nmprof::php {

void PhpRuntime::find(int engine_thread) {
  if (!ZendEngine::find(&zend_)) return;
  found_ = true;
  const char* version = version_name(zend_.version);
  if (!zend_.heap_hookable) {
    log_line("PHP %s: this engine's heap cannot be hooked; profiling native allocations only", version);
    return;
  }
  // A ZTS engine has one heap per thread, and its globals in thread-local storage:
  // neither is followed (no ZTS build was at hand to test with).
  if (!zend_.executor_globals) {
    log_line("PHP %s (ZTS): thread-safe engines are not supported; profiling native allocations only", version);
    return;
  }
  if (zend_.version != ZendVersion::Php82) {
    log_line("PHP %s: sampling ZendMM allocations without PHP frames (engine layout unknown)", version);
  } else if (PhpStacks* stacks = PhpStacks::create(zend_.executor_globals, engine_thread)) {
    stacks_.store(stacks, std::memory_order_release);
  } else {
    log_line("PHP %s: the executor's code was not found; sampling ZendMM allocations without PHP frames", version);
  }
  heap_pending_.store(true, std::memory_order_release);
}

void PhpRuntime::checkpoint() {
  if (!heap_pending_.load(std::memory_order_acquire)) return;
  if (!zend_.get_heap()) return;  // not made yet
  heap_pending_.store(false, std::memory_order_release);
  learn_zend_heap(zend_);
  add_functions_after_startup(zend_);
  const char* sapi = zend_.sapi_name();
  if (sapi && strcmp(sapi, "cli") == 0) {
    install_zend_heap_hooks(zend_);
    return;
  }
  // A server: many requests, each ending with the heap's reset.
  if (!hook_requests(zend_)) {
    log_line("PHP SAPI %s: its requests cannot be followed; profiling native allocations", sapi ? sapi : "unknown");
    return;
  }
  if (PhpStacks* stacks = stacks_.load(std::memory_order_acquire)) stacks->serve_requests();
}

void PhpRuntime::stop() {
  unhook_requests();
  remove_zend_heap_hooks();
}

std::string PhpRuntime::description() const {
  const char* name = version();
  return name ? std::string("PHP ") + name : std::string();
}

void PhpRuntime::append_frames(ThreadState& t, const NativeWalkEnd&, CallStack& stack, ThreadScratch&) {
  PhpStacks* stacks = stacks_.load(std::memory_order_acquire);
  if (!stacks) return;
  stacks->append(t, stack);
  stacks->shutdown_began(t);  // before the sample's time is taken: a block born in the shutdown is seen as such
}

uint64_t PhpRuntime::leftovers_born_before(ThreadState& t) {
  PhpStacks* stacks = stacks_.load(std::memory_order_acquire);
  return stacks ? stacks->shutdown_began(t) : 0;
}

void PhpRuntime::after_fork_in_child(int parent_tid, int child_tid) {
  if (PhpStacks* stacks = stacks_.load(std::memory_order_acquire)) stacks->after_fork_in_child(parent_tid, child_tid);
}

}  // namespace nmprof::php
