// How the agent gets into a process. LD_PRELOAD: the constructor starts it when
// NMPROF_OPTIONS is set (nmprof run sets both). Whatever started it, the recording
// is written out when the library is unloaded at process exit.
#include <cstdlib>

#include "agent/agent.h"
#include "agent/log.h"
#include "agent/hooks/thread_state.h"

namespace {

__attribute__((constructor)) void start_from_environment() {
  const char* text = getenv("NMPROF_OPTIONS");
  if (!text) return;
  nmprof::AgentGuard guard;
  nmprof::AgentOptions options;
  if (auto error = nmprof::parse_agent_options(text, options)) {
    nmprof::log_line("NMPROF_OPTIONS: %s; not profiling", error->c_str());
    return;
  }
  nmprof::start_agent(options, nmprof::AgentMode::Preload);
}

__attribute__((destructor)) void finish_at_exit() { nmprof::finish_agent(); }

}  // namespace
