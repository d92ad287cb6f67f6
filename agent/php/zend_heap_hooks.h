// ZendMM allocations (emalloc and friends: strings, arrays, objects) counted like
// malloc's. The engine routes every request-heap call through custom handlers once
// set (zend_mm_set_custom_handlers); the agent's handlers call the allocator itself
// on the same heap (_zend_mm_alloc and friends, which bypass the handlers), or the
// handlers another extension installed before, and count each call with the same
// sampler as the libc hooks. memory_limit and memory_get_usage() stay the engine's:
// the blocks are the same heap's.
#pragma once

#include "agent/php/zend_engine.h"

namespace nmprof::php {

// Installs the handlers on the engine's current heap unless they are installed or
// the heap is not there yet (false then: try again later). ZendMM off
// (USE_ZEND_ALLOC=0) counts as done: its allocations are malloc's.
bool install_zend_heap_hooks(const ZendEngine& engine);
// Gives the heap the handlers it had before (none: ZendMM's own allocator).
void remove_zend_heap_hooks();

}  // namespace nmprof::php
