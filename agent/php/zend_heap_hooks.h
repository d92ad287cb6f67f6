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

enum class HeapHooks { Installed, NotYet, NotHere };
// Called once while the engine's heap is fresh (right after the engine made it):
// finds where it keeps what memory_limit is checked against.
void learn_zend_heap(const ZendEngine& engine);
// Installs the handlers on the engine's current heap, unless the heap is not there
// yet (NotYet: try again later) or must be left alone (NotHere): ZendMM off
// (USE_ZEND_ALLOC=0: its allocations are malloc's). Callable at any time from the
// engine's thread, as often as the handlers are removed.
HeapHooks install_zend_heap_hooks(const ZendEngine& engine);
// Gives the heap the handlers it had before (none: ZendMM's own allocator), unless
// a neighbour set its own after the agent's. True when the heap is left on the
// engine's own allocator (which a server's engine resets after each request).
bool remove_zend_heap_hooks();
// Calls fn(arg) with the heap's custom handlers flagged off, as the engine's own
// functions see the heap without the agent (zend_mm_gc does nothing while they
// are on; the agent's handlers allocate from the same heap).
void with_custom_heap_off(void (*fn)(void*), void* arg);

}  // namespace nmprof::php
