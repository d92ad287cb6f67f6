#include "agent/hooks/block_sizes.h"

#include <dlfcn.h>
#include <link.h>

#include "agent/hooks/symbol_binding.h"

namespace nmprof {

std::atomic<BlockSizeFn> g_block_sizes[2][kMaxBindings];

namespace {

// malloc_usable_size defined in the object that defines `target` (libc's would not
// say the size of a bundled allocator's blocks).
BlockSizeFn usable_size_beside(void* target) {
  Dl_info info;
  link_map* object = nullptr;
  if (!dladdr1(target, &info, reinterpret_cast<void**>(&object), RTLD_DL_LINKMAP) || !object) return nullptr;
  return reinterpret_cast<BlockSizeFn>(function_defined_in(object->l_addr, object->l_ld, "malloc_usable_size"));
}

// What a binding whose allocator has no malloc_usable_size gets: looked up once.
size_t size_unknown(void*) { return 0; }

}  // namespace

void learn_block_size(HookId id, int k, void* target) {
  if (id != kRealloc && id != kReallocarray) return;
  auto& slot = g_block_sizes[id == kReallocarray][k];
  if (slot.load(std::memory_order_acquire)) return;
  BlockSizeFn size = usable_size_beside(target);
  slot.store(size ? size : size_unknown, std::memory_order_release);
}

}  // namespace nmprof
