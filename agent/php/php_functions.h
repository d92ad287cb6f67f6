// PHP functions the agent adds to the engine, without being an extension: once the
// engine's startup is done (zend_post_startup_cb, before the first request) they
// are registered through zend_register_functions, as internal functions of no
// module:
//   nmprof_context_set(int $span, int $root): void
//   nmprof_context_set_attribute(string $name, ?string $value): void
//   nmprof_context_clear(): void
// which set the calling thread's context as nmprof.h does (the same block the
// samples read). Scripts that must also run without the agent test
// function_exists('nmprof_context_set'). gc_mem_caches() is wrapped as well: the
// engine skips it while custom heap handlers are set, and it collects as without
// the agent.
#pragma once

#include "agent/php/zend_engine.h"

namespace nmprof::php {

// Asks the engine to call back once its startup is done (call it before then, at
// the heap's checkpoint). Only for engines whose structures the agent knows.
void add_functions_after_startup(const ZendEngine& engine);

}  // namespace nmprof::php
