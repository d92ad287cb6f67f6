#include "agent/php/php_requests.h"


#include "agent/hooks/hook_events.h"
#include "agent/php/zend_heap_hooks.h"
#include "agent/php/zend_layout.h"
#include "agent/threads/thread_state.h"
#include "include/nmprof.h"

namespace nmprof::php {
namespace {

using SapiCallback = int (*)();
constexpr int kSuccess = 0;

struct Wrapped {
  SapiCallback* activate;  // the slots in sapi_module
  SapiCallback* deactivate;
  SapiCallback original_activate;  // what they held
  SapiCallback original_deactivate;
  ZendEngine engine;
};
Wrapped g_wrapped{};
bool g_hooked = false;

int on_request_start() {
  int result = g_wrapped.original_activate ? g_wrapped.original_activate() : kSuccess;
  AgentGuard guard;
  install_zend_heap_hooks(g_wrapped.engine);
  return result;
}

int on_request_end() {
  bool heap_resets;
  {
    AgentGuard guard;
    heap_resets = remove_zend_heap_hooks();
    // A request's context ends with it, whether or not its code cleared it.
    nmprof_context_clear();
  }
  // (With a neighbour's handlers left on the heap, the engine does not reset it.)
  on_runtime_request_end(jfr::schema::kZendMM, heap_resets);
  return g_wrapped.original_deactivate ? g_wrapped.original_deactivate() : kSuccess;
}

}  // namespace

bool hook_requests(const ZendEngine& engine) {
  if (g_hooked) return true;
  if (!engine.sapi_module) return false;
  auto module = reinterpret_cast<uintptr_t>(engine.sapi_module);
  g_wrapped.activate = reinterpret_cast<SapiCallback*>(module + layout82::kSapiActivate);
  g_wrapped.deactivate = reinterpret_cast<SapiCallback*>(module + layout82::kSapiDeactivate);
  g_wrapped.original_activate = *g_wrapped.activate;
  g_wrapped.original_deactivate = *g_wrapped.deactivate;
  g_wrapped.engine = engine;
  *g_wrapped.activate = on_request_start;
  *g_wrapped.deactivate = on_request_end;
  g_hooked = true;
  return true;
}

void unhook_requests() {
  if (!g_hooked) return;
  *g_wrapped.activate = g_wrapped.original_activate;
  *g_wrapped.deactivate = g_wrapped.original_deactivate;
  g_hooked = false;
  remove_zend_heap_hooks();
}

}  // namespace nmprof::php
