// An image a program execs is recorded when its environment still preloads the agent
// with its options (nmprof run sets LD_PRELOAD and NMPROF_OPTIONS, and children
// inherit them). A launcher that sets LD_PRELOAD to an allocator of its own
// (`export LD_PRELOAD=libjemalloc.so.2; exec app`, `env LD_PRELOAD=... app`) or
// execs with an environment of its own dropped the agent from the program without a
// word. The exec hooks put the two variables back: the agent's library after the
// launcher's preloads, its options as it started with them. Only for an agent that
// started from its environment, and without allocating: the new environment is built
// in the hook's frame (a vfork child execs on its parent's memory).
#pragma once

#include <cstddef>

namespace nmprof::exec_environment {

// Whether the LD_PRELOAD value `preload` names the library file `file_name` (by its
// name, as ld.so may have found it through a search path).
bool preload_names(const char* preload, const char* file_name);

// At the agent's start from its environment: its library's path and options text.
void remember(const char* library_path, const char* options);

// The bytes an exec of `envp` needs for its environment with the agent's variables
// put back; 0 when envp has them (or nothing was remembered, or it would take more
// of the stack than a small thread has): envp goes as it is.
size_t room_needed(char* const* envp);

// That environment, built in `room` (room_needed(envp) bytes).
char* const* with_agent(char* const* envp, void* room);

}  // namespace nmprof::exec_environment
