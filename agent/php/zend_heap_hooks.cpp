#include "agent/php/zend_heap_hooks.h"

#include <cstring>

#include "agent/hooks/allocation_hooks.h"
#include "agent/log.h"

namespace nmprof::php {
namespace {

namespace schema = jfr::schema;

// The handlers have no context argument: what they forward to is kept here, set once
// before they are installed and never changed while they are.
struct Forwarding {
  ZendMmHeap* heap;
  ZendEngine engine;
  // A neighbour's handlers found on the heap (all null: none); they get the calls.
  ZendMalloc previous_malloc;
  ZendFree previous_free;
  ZendRealloc previous_realloc;
};
Forwarding g_to;
bool g_installed = false;

// With custom handlers set, zend_mm_gc() does nothing, and the allocator calls it
// to stay under memory_limit. The flag that says so (use_custom_heap, an int, the
// heap's first member since PHP 7.0) is cleared while the allocator runs, so it
// collects as it does without nmprof. The memory_limit error leaves the allocator
// by a longjmp with the flag cleared: the engine then ends on its own allocator.
template <typename Call>
void* allocate_directly(Call call) {
  int* use_custom_heap = reinterpret_cast<int*>(g_to.heap);
  int custom = *use_custom_heap;
  *use_custom_heap = 0;
  void* p = call();
  *use_custom_heap = custom;
  return p;
}

void* heap_malloc(size_t size) {
  void* p = g_to.previous_malloc ? g_to.previous_malloc(size)
                                 : allocate_directly([&] { return g_to.engine.heap_alloc(g_to.heap, size); });
  return count_allocation(p, size, schema::kZendMM);
}

void heap_free(void* p) {
  if (__builtin_expect(LiveHeap::maybe_tracked(p), 0)) on_tracked_free(p);
  if (g_to.previous_free) return g_to.previous_free(p);
  // The engine's final shutdown hands a custom heap's own address to its free
  // handler (for heaps that malloc'ed their header). This one lives in its first
  // chunk, which stays mapped until the process ends.
  if (p != g_to.heap) g_to.engine.heap_free(g_to.heap, p);
}

void* heap_realloc(void* old, size_t size) {
  auto call = [&] {
    return g_to.previous_realloc
               ? g_to.previous_realloc(old, size)
               : allocate_directly([&] { return g_to.engine.heap_realloc(g_to.heap, old, size); });
  };
  if (__builtin_expect(LiveHeap::maybe_tracked(old), 0)) return realloc_tracked(old, size, call, schema::kZendMM);
  return count_allocation(call(), size, schema::kZendMM);
}

}  // namespace

HeapHooks install_zend_heap_hooks(const ZendEngine& engine) {
  if (g_installed) return HeapHooks::Installed;
  ZendMmHeap* heap = engine.get_heap();
  if (!heap) return HeapHooks::NotYet;
  const char* sapi = engine.sapi_name();
  if (!sapi || strcmp(sapi, "cli") != 0) {
    log_line("PHP SAPI %s: ZendMM allocations are sampled in the CLI only; profiling native allocations",
             sapi ? sapi : "unknown");
    return HeapHooks::NotHere;
  }
  ZendMalloc previous_malloc = nullptr;
  ZendFree previous_free = nullptr;
  ZendRealloc previous_realloc = nullptr;
  engine.get_custom_handlers(heap, &previous_malloc, &previous_free, &previous_realloc);
  if (previous_malloc && previous_malloc == engine.libc_malloc) return HeapHooks::NotHere;  // USE_ZEND_ALLOC=0
  g_to = {heap, engine, previous_malloc, previous_free, previous_realloc};
  engine.set_custom_handlers(heap, heap_malloc, heap_free, heap_realloc);
  g_installed = true;
  return HeapHooks::Installed;
}

void remove_zend_heap_hooks() {
  if (!g_installed) return;
  g_to.engine.set_custom_handlers(g_to.heap, g_to.previous_malloc, g_to.previous_free, g_to.previous_realloc);
  g_installed = false;
}

}  // namespace nmprof::php
