// How the agent gets into a process. LD_PRELOAD: the constructor starts it when
// NMPROF_OPTIONS is set (nmprof run sets both). Loaded later by dlopen (the JVM's
// attach, or nmprof attach through ptrace: native_attach.cpp), it starts only when
// asked, even if the process's environment has NMPROF_OPTIONS. Whatever started
// it, the recording is written out when the library is unloaded at process exit.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "agent/agent.h"
#include "agent/hooks/exec_environment.h"
#include "agent/log.h"
#include "agent/threads/thread_state.h"

namespace {

// This library's path, when LD_PRELOAD names it (by its file name, as ld.so may have
// found it through a search path): then the loader is starting the program. Null
// when it does not.
const char* preloaded_path() {
  Dl_info self{};
  const char* preload = getenv("LD_PRELOAD");
  if (!preload || !dladdr(reinterpret_cast<void*>(&preloaded_path), &self) || !self.dli_fname) return nullptr;
  const char* slash = strrchr(self.dli_fname, '/');
  return nmprof::exec_environment::preload_names(preload, slash ? slash + 1 : self.dli_fname) ? self.dli_fname
                                                                                              : nullptr;
}

__attribute__((constructor)) void start_from_environment() {
  const char* text = getenv(nmprof::kOptionsVariable);
  const char* library = text ? preloaded_path() : nullptr;
  if (!library) return;
  nmprof::AgentGuard guard;
  nmprof::AgentOptions options;
  if (auto error = nmprof::parse_agent_options(text, options)) {
    nmprof::log_line("%s: %s; not profiling", nmprof::kOptionsVariable, error->c_str());
    return;
  }
  nmprof::exec_environment::remember(library, text);
  nmprof::start_agent(options, nmprof::AgentMode::Preload);
}

__attribute__((destructor)) void finish_at_exit() { nmprof::finish_agent(); }

}  // namespace
