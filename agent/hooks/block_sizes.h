// The size of a block its own allocator knows (malloc_usable_size), which realloc's
// hooks read before the call: a realloc counts only what it adds to the block. Each
// bound realloc target gets the malloc_usable_size of the object that defines it
// (libc's for libc's realloc, jemalloc's for a preloaded jemalloc), found in the
// object's own symbol table; an object without one gets none, and its reallocs count
// their whole new size.
#pragma once

#include <atomic>
#include <cstddef>

#include "agent/hooks/hook_table.h"

namespace nmprof {

using BlockSizeFn = size_t (*)(void*);
// By binding index, for kRealloc and kReallocarray (null: unknown).
extern std::atomic<BlockSizeFn> g_block_sizes[2][kMaxBindings];

// Called when `target` becomes binding k of `id` (only realloc's and reallocarray's matter).
void learn_block_size(HookId id, int k, void* target);

// The size of `old` as the allocator of binding k of `id` knows it; 0 for no block
// (realloc(NULL, n)) or an allocator whose sizes are unknown.
inline size_t block_size(HookId id, int k, void* old) {
  BlockSizeFn size = g_block_sizes[id == kReallocarray][k].load(std::memory_order_relaxed);
  return old && size ? size(old) : 0;
}

}  // namespace nmprof
