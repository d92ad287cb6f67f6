#include "agent/php/zend_heap_hooks.h"

#include <cstdint>

#include "agent/hooks/allocation_hooks.h"
#include "agent/hooks/hook_events.h"
#include "agent/sampling/sampler.h"

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
  // The heap's real size, real peak and memory_limit, consecutive words (see
  // learn_zend_heap); until they are found, kUnknownSizes: every allocation goes
  // the careful way. One pointer, so that the check loads one address.
  const size_t* sizes;
};
enum HeapSize { kRealSize, kRealPeak, kLimit };
constexpr size_t kUnknownSizes[3] = {SIZE_MAX, 0, 0};
Forwarding g_to{nullptr, {}, nullptr, nullptr, nullptr, kUnknownSizes};
bool g_installed = false;

// With custom handlers set, zend_mm_gc() does nothing, and the allocator calls it
// to stay under memory_limit. The flag that says so (use_custom_heap, an int, the
// heap's first member since PHP 7.0) is cleared while the allocator runs, so it
// collects as it does without nmprof. The memory_limit error leaves the allocator
// by a longjmp with the flag cleared: the engine then ends on its own allocator.
template <typename Call>
auto allocate_directly(Call call) {
  int* use_custom_heap = reinterpret_cast<int*>(g_to.heap);
  int custom = *use_custom_heap;
  *use_custom_heap = 0;
  auto result = call();
  *use_custom_heap = custom;
  return result;
}

// The allocator collects (zend_mm_gc) only when it needs a new chunk or a huge
// block (or a huge block's growth) past memory_limit: an allocation or realloc to
// a size that stays a few chunks below the limit cannot, and goes to the allocator
// without clearing the flag.
constexpr size_t kCollectMargin = size_t{4} << 20;
// An absurd size that wraps around goes the fast way: the allocator refuses it
// without collecting.
bool may_collect(size_t size) {
  const size_t* sizes = g_to.sizes;
  return sizes[kRealSize] + size + kCollectMargin > sizes[kLimit];
}

// The handlers when no neighbour had any: the non-sampled path is the countdown,
// the limit check and a tail call into the allocator.
__attribute__((noinline)) void* careful_malloc(size_t size) {
  return allocate_directly([&] { return g_to.engine.heap_alloc(g_to.heap, size); });
}

__attribute__((noinline)) void* sampled_malloc(size_t size) {
  return on_sampled_allocation(careful_malloc(size), size, schema::kZendMM);
}

void* direct_malloc(size_t size) {
  if (__builtin_expect(Sampler::countdown(size), 0)) return sampled_malloc(size);
  if (__builtin_expect(may_collect(size), 0)) return careful_malloc(size);
  return g_to.engine.heap_alloc(g_to.heap, size);
}

void direct_free(void* p) {
  if (__builtin_expect(LiveHeap::maybe_tracked(p), 0)) on_tracked_free(p);
  // The engine's final shutdown hands a custom heap's own address to its free
  // handler (for heaps that malloc'ed their header). This one lives in its first
  // chunk, which stays mapped until the process ends.
  if (__builtin_expect(p != g_to.heap, 1)) g_to.engine.heap_free(g_to.heap, p);
}

// The handlers when a neighbour installed its own before: they get the calls.
void* chained_malloc(size_t size) { return count_allocation(g_to.previous_malloc(size), size, schema::kZendMM); }

void chained_free(void* p) {
  if (__builtin_expect(LiveHeap::maybe_tracked(p), 0)) on_tracked_free(p);
  g_to.previous_free(p);
}

// The size of a block the engine's own allocator made, as it knows it; 0 (the
// realloc counts its whole new size) for a neighbour's blocks, whose allocator is
// not known. The engine says only with the custom handlers flagged off.
size_t zend_block_size(void* p) {
  if (!p || g_to.previous_realloc || !g_to.engine.heap_block_size) return 0;
  return allocate_directly([&] { return g_to.engine.heap_block_size(g_to.heap, p); });
}

void* heap_realloc(void* old, size_t size) {
  auto call = [&] {
    if (g_to.previous_realloc) return g_to.previous_realloc(old, size);
    if (__builtin_expect(may_collect(size), 0))
      return allocate_directly([&] { return g_to.engine.heap_realloc(g_to.heap, old, size); });
    return g_to.engine.heap_realloc(g_to.heap, old, size);
  };
  size_t before = zend_block_size(old);
  if (__builtin_expect(LiveHeap::maybe_tracked(old), 0))
    return realloc_tracked<true>(old, before, size, call, zend_block_size, schema::kZendMM);
  return count_growth(call(), before, size, zend_block_size, schema::kZendMM);
}

}  // namespace

void learn_zend_heap(const ZendEngine& engine) {
  // The heap's real size, real peak and memory_limit are consecutive words (struct
  // _zend_mm_heap, PHP 7.0 to 8.3; Debian's build adds its members after them).
  // They are found by their values while the heap is fresh: its real size and peak
  // are what zend_memory_usage(1) and zend_memory_peak_usage(1) say, and the limit
  // is still the engine's "none" (SIZE_MAX / 2).
  ZendMmHeap* heap = engine.get_heap();
  if (!heap || !engine.memory_usage || !engine.memory_peak_usage) return;
  g_to.heap = heap;
  size_t real_size = engine.memory_usage(true), real_peak = engine.memory_peak_usage(true);
  constexpr size_t kNoLimit = SIZE_MAX >> 1;
  auto words = reinterpret_cast<const size_t*>(heap);
  for (size_t i = 1; i + 2 < 128 && real_size != 0; i++) {
    if (words[i] == real_size && words[i + 1] == real_peak && words[i + 2] == kNoLimit) {
      g_to.sizes = &words[i];
      return;
    }
  }
}

HeapHooks install_zend_heap_hooks(const ZendEngine& engine) {
  if (g_installed) return HeapHooks::Installed;
  ZendMmHeap* heap = engine.get_heap();
  if (!heap) return HeapHooks::NotYet;
  ZendMalloc previous_malloc = nullptr;
  ZendFree previous_free = nullptr;
  ZendRealloc previous_realloc = nullptr;
  engine.get_custom_handlers(heap, &previous_malloc, &previous_free, &previous_realloc);
  if (previous_malloc && previous_malloc == engine.libc_malloc) return HeapHooks::NotHere;  // USE_ZEND_ALLOC=0
  if (heap != g_to.heap && g_to.heap) {
    // Another heap than the one learnt (an engine that made a new one): its limits are not known.
    g_to.sizes = kUnknownSizes;
  }
  g_to.heap = heap;
  g_to.engine = engine;
  g_to.previous_malloc = previous_malloc;
  g_to.previous_free = previous_free;
  g_to.previous_realloc = previous_realloc;
  if (previous_malloc)
    engine.set_custom_handlers(heap, chained_malloc, chained_free, heap_realloc);
  else
    engine.set_custom_handlers(heap, direct_malloc, direct_free, heap_realloc);
  g_installed = true;
  return HeapHooks::Installed;
}

bool remove_zend_heap_hooks() {
  if (!g_installed) return false;
  // A neighbour that set its handlers after ours (and may call ours) keeps them:
  // ours stay where they are, and are not installed again on top of its.
  ZendMalloc current_malloc = nullptr;
  ZendFree current_free = nullptr;
  ZendRealloc current_realloc = nullptr;
  g_to.engine.get_custom_handlers(g_to.heap, &current_malloc, &current_free, &current_realloc);
  if (current_free != direct_free && current_free != chained_free) return false;
  g_to.engine.set_custom_handlers(g_to.heap, g_to.previous_malloc, g_to.previous_free, g_to.previous_realloc);
  g_installed = false;
  return !g_to.previous_malloc;
}

void with_custom_heap_off(void (*fn)(void*), void* arg) {
  if (!g_installed) return fn(arg);
  allocate_directly([&] {
    fn(arg);
    return nullptr;
  });
}

}  // namespace nmprof::php
