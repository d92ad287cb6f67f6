// How the agent gets into a process. LD_PRELOAD: the constructor starts it when
// NMPROF_OPTIONS is set (nmprof run sets both). Loaded later by dlopen (the JVM's
// attach, or nmprof attach through ptrace: native_attach.cpp), it starts only when
// asked, even if the process's environment has NMPROF_OPTIONS. Whatever started
// it, the recording is written out when the library is unloaded at process exit.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "agent/agent.h"
#include "agent/log.h"
#include "agent/threads/thread_state.h"

namespace {

// True when LD_PRELOAD names this library (by its file name, as ld.so may have
// found it through a search path): then the loader is starting the program.
bool preloaded() {
  Dl_info self{};
  const char* preload = getenv("LD_PRELOAD");
  if (!preload || !dladdr(reinterpret_cast<void*>(&preloaded), &self) || !self.dli_fname) return false;
  const char* slash = strrchr(self.dli_fname, '/');
  const char* name = slash ? slash + 1 : self.dli_fname;
  size_t length = strlen(name);
  for (const char* entry = preload; *entry;) {
    size_t entry_length = strcspn(entry, ": ");
    const char* end = entry + entry_length;
    if (entry_length >= length && strncmp(end - length, name, length) == 0 &&
        (entry_length == length || end[-static_cast<long>(length) - 1] == '/'))
      return true;
    entry = *end ? end + 1 : end;
  }
  return false;
}

__attribute__((constructor)) void start_from_environment() {
  const char* text = getenv(nmprof::kOptionsVariable);
  if (!text || !preloaded()) return;
  nmprof::AgentGuard guard;
  nmprof::AgentOptions options;
  if (auto error = nmprof::parse_agent_options(text, options)) {
    nmprof::log_line("%s: %s; not profiling", nmprof::kOptionsVariable, error->c_str());
    return;
  }
  nmprof::start_agent(options, nmprof::AgentMode::Preload);
}

__attribute__((destructor)) void finish_at_exit() { nmprof::finish_agent(); }

}  // namespace
