#include "agent/php/zend_engine.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstring>

namespace nmprof::php {
namespace {

template <typename Fn>
bool look_up(const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
  return *out != nullptr;
}

bool exports(const char* name) { return dlsym(RTLD_DEFAULT, name) != nullptr; }

// The engine has no version symbol that is set this early (zend_startup fills its
// version string after creating the heap), so the version is told by the API it
// exports: zend_atomic_bool_store came with PHP 8.2, zend_call_stack_get with 8.3.
ZendVersion version_from_exports() {
  if (exports("zend_atomic_bool_store") && !exports("zend_call_stack_get")) return ZendVersion::Php82;
  return ZendVersion::Unknown;
}

// The engine is looked for in php executables only (php, php8.2, php-fpm8.2...):
// a dlsym that fails leaves its error message in the host's heap.
bool running_a_php_executable() {
  char path[4096];
  ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) return false;
  path[length] = '\0';
  const char* slash = strrchr(path, '/');
  return strncmp(slash ? slash + 1 : path, "php", 3) == 0;
}

}  // namespace

bool ZendEngine::find(ZendEngine* out) {
  if (!running_a_php_executable()) return false;
  if (!look_up("zend_mm_get_heap", &out->get_heap) ||
      !look_up("zend_mm_set_custom_handlers", &out->set_custom_handlers) ||
      !look_up("zend_mm_get_custom_handlers", &out->get_custom_handlers) ||
      !look_up("_zend_mm_alloc", &out->heap_alloc) || !look_up("_zend_mm_free", &out->heap_free) ||
      !look_up("_zend_mm_realloc", &out->heap_realloc))
    return false;
  // Debug builds (which export the debug handler API) pass file and line arguments
  // to the allocator functions as well.
  out->heap_hookable = !exports("zend_mm_set_custom_handlers_ex") && !exports("zend_mm_set_custom_debug_handlers");
  look_up("__zend_malloc", &out->libc_malloc);
  look_up("_zend_mm_block_size", &out->heap_block_size);
  look_up("zend_memory_usage", &out->memory_usage);
  look_up("zend_memory_peak_usage", &out->memory_peak_usage);
  out->sapi_module = static_cast<const char* const*>(dlsym(RTLD_DEFAULT, "sapi_module"));
  out->executor_globals = dlsym(RTLD_DEFAULT, "executor_globals");
  out->compiler_globals = dlsym(RTLD_DEFAULT, "compiler_globals");
  look_up("zend_post_startup_cb", &out->post_startup_cb);
  look_up("zend_register_functions", &out->register_functions);
  look_up("zend_parse_parameters", &out->parse_parameters);
  look_up("zend_hash_str_find", &out->hash_str_find);
  out->version = version_from_exports();
  return true;
}

const char* version_name(ZendVersion version) { return version == ZendVersion::Php82 ? "8.2" : "unknown"; }

}  // namespace nmprof::php
