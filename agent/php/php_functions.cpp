#include "agent/php/php_functions.h"

#include <cstdint>
#include <cstring>
#include <utility>

#include "agent/log.h"
#include "agent/php/engine_memory.h"
#include "agent/php/zend_heap_hooks.h"
#include "agent/php/zend_layout.h"
#include "agent/threads/thread_state.h"
#include "include/nmprof.h"

namespace nmprof::php {
namespace {

namespace L = layout82;

// The engine's declarations of an internal function (Zend/zend_API.h
// zend_function_entry, Zend/zend_compile.h zend_internal_arg_info).
using Handler = void (*)(uintptr_t execute_data, void* return_value);
struct ArgInfo {
  const char* name;  // the first entry (the return value's) holds the required argument count
  void* type_class;
  uint32_t type_mask;  // 0: untyped (arguments are checked by zend_parse_parameters)
  const char* default_value;
};
struct FunctionEntry {
  const char* name;
  Handler handler;
  const ArgInfo* arg_info;
  uint32_t num_args;
  uint32_t flags;
};
static_assert(sizeof(ArgInfo) == 32 && sizeof(FunctionEntry) == 32, "PHP 8.2's layouts");
constexpr int kModulePersistent = 1;
constexpr int kSuccess = 0;

ZendEngine g_engine;
int (*g_previous_post_startup)() = nullptr;
Handler g_gc_mem_caches = nullptr;

uint32_t argument_count(uintptr_t execute_data) { return load<uint32_t>(execute_data, L::kExecuteNumArgs); }

// A failed parse has thrown the engine's TypeError or ArgumentCountError already.
void context_set(uintptr_t execute_data, void*) {
  int64_t span = 0, root = 0;
  if (g_engine.parse_parameters(argument_count(execute_data), "ll", &span, &root) != kSuccess) return;
  nmprof_context_set(static_cast<uint64_t>(span), static_cast<uint64_t>(root));
}

void context_set_attribute(uintptr_t execute_data, void*) {
  const char *name = nullptr, *value = nullptr;
  size_t name_length = 0, value_length = 0;
  if (g_engine.parse_parameters(argument_count(execute_data), "ss!", &name, &name_length, &value, &value_length) !=
      kSuccess)
    return;
  nmprof_context_set_attribute(name, value);
}

void context_clear(uintptr_t execute_data, void*) {
  if (g_engine.parse_parameters(argument_count(execute_data), "") != kSuccess) return;
  nmprof_context_clear();
}

void call_gc_mem_caches(void* call) {
  auto* args = static_cast<std::pair<uintptr_t, void*>*>(call);
  g_gc_mem_caches(args->first, args->second);
}

void gc_mem_caches_collecting(uintptr_t execute_data, void* return_value) {
  std::pair<uintptr_t, void*> args{execute_data, return_value};
  with_custom_heap_off(call_gc_mem_caches, &args);
}

const ArgInfo kSetArgs[] = {{reinterpret_cast<const char*>(2), nullptr, 0, nullptr},
                                {"span", nullptr, 0, nullptr},
                                {"root", nullptr, 0, nullptr}};
const ArgInfo kSetAttributeArgs[] = {{reinterpret_cast<const char*>(2), nullptr, 0, nullptr},
                                         {"name", nullptr, 0, nullptr},
                                         {"value", nullptr, 0, nullptr}};
const ArgInfo kClearArgs[] = {{reinterpret_cast<const char*>(0), nullptr, 0, nullptr}};
const FunctionEntry kFunctions[] = {
    {"nmprof_context_set", context_set, kSetArgs, 2, 0},
    {"nmprof_context_set_attribute", context_set_attribute, kSetAttributeArgs, 2, 0},
    {"nmprof_context_clear", context_clear, kClearArgs, 0, 0},
    {nullptr, nullptr, nullptr, 0, 0},
};

uintptr_t find_function(const char* name, size_t length) {
  auto table = reinterpret_cast<const void*>(
      load_pointer(reinterpret_cast<uintptr_t>(g_engine.compiler_globals), L::kCompilerFunctionTable));
  auto* found = table ? g_engine.hash_str_find(table, name, length) : nullptr;
  return found ? load_pointer(reinterpret_cast<uintptr_t>(found), 0) : 0;
}

// The module the functions say they come from: the engine's compiler and OPcache's
// optimizer read a function's module (its type), and registered outside a module's
// startup the functions have none. It is in no module registry (get_loaded_extensions
// does not list it).
alignas(8) unsigned char g_module[L::kModuleEntrySize];

template <typename T>
void store(unsigned char* base, size_t offset, T value) {
  memcpy(base + offset, &value, sizeof value);
}

void give_functions_a_module() {
  store<unsigned short>(g_module, L::kModuleSize, L::kModuleEntrySize);
  store<unsigned>(g_module, L::kModuleApi, L::kModuleApiNo);
  store<const char*>(g_module, L::kModuleName, "nmprof");
  store<int>(g_module, L::kModuleStarted, 1);
  store<unsigned char>(g_module, L::kModuleType, kModulePersistent);
  store<int>(g_module, L::kModuleNumber, INT32_MAX);
  for (const FunctionEntry* f = kFunctions; f->name; f++) {
    uintptr_t function = find_function(f->name, strlen(f->name));
    if (function) store<void*>(reinterpret_cast<unsigned char*>(function), L::kInternalModule, g_module);
  }
}

void wrap_gc_mem_caches() {
  constexpr char kName[] = "gc_mem_caches";
  uintptr_t function = find_function(kName, sizeof kName - 1);
  if (!function || load<uint8_t>(function, L::kFunctionType) != L::kInternalFunction) return;
  auto* handler = reinterpret_cast<Handler*>(function + L::kInternalHandler);
  g_gc_mem_caches = *handler;
  *handler = gc_mem_caches_collecting;
}

int after_startup() {
  {
    AgentGuard guard;
    if (g_engine.register_functions(nullptr, kFunctions, nullptr, kModulePersistent) == kSuccess)
      give_functions_a_module();
    else
      log_line("PHP: nmprof_context_set() and the other context functions could not be added");
    wrap_gc_mem_caches();
  }
  return g_previous_post_startup ? g_previous_post_startup() : kSuccess;
}

}  // namespace

void add_functions_after_startup(const ZendEngine& engine) {
  if (engine.version != ZendVersion::Php82 || !engine.post_startup_cb || !engine.register_functions ||
      !engine.parse_parameters || !engine.hash_str_find || !engine.compiler_globals)
    return;
  // Again after a stop (attached): the callback is set once.
  if (*engine.post_startup_cb == after_startup) return;
  g_engine = engine;
  g_previous_post_startup = *engine.post_startup_cb;
  *engine.post_startup_cb = after_startup;
}

}  // namespace nmprof::php
