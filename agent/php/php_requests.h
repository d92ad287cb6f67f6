// The requests of a PHP server (php -S, php-fpm and other SAPIs that serve many
// requests with one engine). At the end of each request the engine resets its heap,
// which it skips while custom handlers are set: the ZendMM handlers are therefore
// set for each request only, from the SAPI's activate callback (in
// php_request_startup) to its deactivate callback (near the end of
// php_request_shutdown, before the reset). The SAPI's callbacks, in the exported
// sapi_module, are wrapped. The blocks still tracked at the end of a request die
// with the reset: their frees are recorded then. The thread's context (nmprof.h,
// nmprof_context_set()) is cleared then too.
#pragma once

#include "agent/php/zend_engine.h"

namespace nmprof::php {

// False when the SAPI's callbacks cannot be wrapped (no sapi_module).
bool hook_requests(const ZendEngine& engine);
// The SAPI's own callbacks back, and the heap's handlers.
void unhook_requests();

}  // namespace nmprof::php
