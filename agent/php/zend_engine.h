// The Zend Engine (PHP) in this process, found by the symbols the php executable
// exports for its extensions: the ZendMM API the agent routes allocations through,
// and which engine version runs (it decides whether its structures can be read).
#pragma once

#include <cstddef>
#include <cstdint>

namespace nmprof::php {

struct ZendMmHeap;  // opaque: only the engine's own functions look inside

using ZendMalloc = void* (*)(size_t);
using ZendFree = void (*)(void*);
using ZendRealloc = void* (*)(void*, size_t);

// PHP versions whose engine structures the agent knows (see zend_layout.h).
enum class ZendVersion { Unknown, Php82 };

struct ZendEngine {
  // ZendMM: the current heap, its custom handler slots, and the allocator itself
  // (_zend_mm_alloc and friends work on a heap directly, bypassing custom handlers).
  ZendMmHeap* (*get_heap)();
  void (*set_custom_handlers)(ZendMmHeap*, ZendMalloc, ZendFree, ZendRealloc);
  void (*get_custom_handlers)(ZendMmHeap*, ZendMalloc*, ZendFree*, ZendRealloc*);
  void* (*heap_alloc)(ZendMmHeap*, size_t);
  void (*heap_free)(ZendMmHeap*, void*);
  void* (*heap_realloc)(ZendMmHeap*, void*, size_t);
  // The size of a block of the heap (its bin's, its run's pages, or a huge block's
  // mapping); 0 while custom handlers are flagged on. Optional.
  size_t (*heap_block_size)(ZendMmHeap*, void*);
  // zend_memory_usage, zend_memory_peak_usage (argument: real sizes, in chunks).
  size_t (*memory_usage)(bool);
  size_t (*memory_peak_usage)(bool);
  // The libc-backed handlers of USE_ZEND_ALLOC=0 (ZendMM off): those allocations
  // are malloc's, counted by the libc hooks already.
  ZendMalloc libc_malloc;
  // What adding PHP functions takes (php_functions.h): the callback the engine
  // calls once its startup is done, the registration of internal functions, their
  // argument parsing, and the function table (in compiler_globals, NTS builds).
  int (**post_startup_cb)();
  int (*register_functions)(void* scope, const void* functions, void* function_table, int type);
  int (*parse_parameters)(uint32_t num_args, const char* type_spec, ...);
  void* (*hash_str_find)(const void* table, const char* key, size_t length);
  void* compiler_globals;
  // The SAPI module (its first member is its name: "cli", "cli-server", "fpm-fcgi").
  const char* const* sapi_module;
  const char* sapi_name() const { return sapi_module ? *sapi_module : nullptr; }
  // NTS builds only (ZTS builds keep it in thread-local storage): null tells a ZTS
  // engine.
  void* executor_globals;
  ZendVersion version;
  // False on PHP 8.4+, whose custom heaps also take shutdown and gc handlers
  // (zend_mm_set_custom_handlers_ex), which the agent does not implement yet, and
  // on debug builds of the engine.
  bool heap_hookable;

  // False when this process runs no Zend Engine.
  static bool find(ZendEngine* out);
};

const char* version_name(ZendVersion version);

}  // namespace nmprof::php
