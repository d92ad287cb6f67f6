// The agent's entry point for nmprof.h, exported (exports.map) so that the header
// finds it with dlsym: the calling thread's context block.
#include "agent/agent.h"
#include "agent/threads/thread_context.h"
#include "agent/threads/thread_state.h"

extern "C" __attribute__((visibility("default"))) nmprof_context_block* nmprof_thread_context(int abi) {
  if (abi != NMPROF_CONTEXT_ABI || !nmprof::process_followed()) return nullptr;
  nmprof_context_block* block = nmprof::t_state.context;
  return block ? block : nmprof::context_of_this_thread();
}
