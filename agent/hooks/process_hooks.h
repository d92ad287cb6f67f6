// Entry points for the calls that change what is loaded or end the process image:
// dlopen/dlclose (new libraries must be patched; unloaded ones forgotten), the exec
// family and _exit (the recording must reach the file first, since neither runs
// exit handlers).
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <cstdarg>
#include <cstddef>

#include "agent/hooks/exec_environment.h"
#include "agent/hooks/hook_events.h"
#include "agent/hooks/hook_table.h"
#include "agent/hooks/loader_caller.h"

namespace nmprof {

// When the caller matters (loader_caller.h), the call goes on as the program made it,
// a tail call that leaves the program's return address to the dynamic linker, and what
// it loads is patched at the agent's next write. (A tail call needs -O2, as every build
// type but Debug has: e2e/test_loader_callers.py fails without one.)
template <int K>
struct DlopenHook {
  static void* call(const char* file, int flags) {
    if (dlopen_depends_on_caller(file, __builtin_return_address(0))) {
      on_libraries_loading_unseen();
      return hook_target<void* (*)(const char*, int)>(kDlopen, K)(file, flags);
    }
    void* handle = hook_target<void* (*)(const char*, int)>(kDlopen, K)(file, flags);
    if (handle) on_libraries_changed((flags & RTLD_DEEPBIND) != 0);
    return handle;
  }
};

template <int K>
struct DlmopenHook {
  static void* call(Lmid_t namespace_id, const char* file, int flags) {
    if (dlopen_depends_on_caller(file, __builtin_return_address(0))) {
      on_libraries_loading_unseen();
      return hook_target<void* (*)(Lmid_t, const char*, int)>(kDlmopen, K)(namespace_id, file, flags);
    }
    void* handle = hook_target<void* (*)(Lmid_t, const char*, int)>(kDlmopen, K)(namespace_id, file, flags);
    if (handle) on_libraries_changed((flags & RTLD_DEEPBIND) != 0);
    return handle;
  }
};

template <int K>
struct DlsymHook {
  static void* call(void* handle, const char* name) {
    // RTLD_NEXT: the libraries after the caller's, as the program called it (tail call).
    if (handle == RTLD_NEXT) return hook_target<void* (*)(void*, const char*)>(kDlsym, K)(handle, name);
    void* found = hook_target<void* (*)(void*, const char*)>(kDlsym, K)(handle, name);
    // Only JNI_CreateJavaVM is of interest: a first-letter test keeps the rest cheap.
    return found && name && name[0] == 'J' ? on_symbol_lookup(name, found) : found;
  }
};

// PHP's start_memory_manager() calls sysconf right after it made the engine's heap.
template <int K>
struct SysconfHook {
  static long call(int name) {
    long value = hook_target<long (*)(int)>(kSysconf, K)(name);
    on_runtime_checkpoint();
    return value;
  }
};

template <int K>
struct DlcloseHook {
  static int call(void* handle) {
    int result = hook_target<int (*)(void*)>(kDlclose, K)(handle);
    on_libraries_changed(false);
    return result;
  }
};

// The exec family: the recording is written out first, and the new image gets the
// agent's variables back when the program's environment lost them
// (exec_environment.h; built on this frame's stack, as glibc's execl builds its argv).
using Execve = int (*)(const char*, char* const*, char* const*);

// A statement: alloca's memory must last until the exec, in the hook's own frame.
#define NMPROF_PUT_AGENT_BACK(envp) \
  if (size_t room = exec_environment::room_needed(envp)) envp = exec_environment::with_agent(envp, __builtin_alloca(room))

template <int K>
struct ExecveHook {
  static int call(const char* path, char* const argv[], char* const* envp) {
    on_process_image_ending(path);
    NMPROF_PUT_AGENT_BACK(envp);
    return hook_target<Execve>(kExecve, K)(path, argv, envp);
  }
};

template <int K>
struct ExecvpeHook {
  static int call(const char* file, char* const argv[], char* const* envp) {
    on_process_image_ending(file);
    NMPROF_PUT_AGENT_BACK(envp);
    return hook_target<Execve>(kExecvpe, K)(file, argv, envp);
  }
};

// execv, execvp: (path, argv), with the process's environment; when it lost the
// agent's variables, execve and execvpe take the one that has them back.
template <HookId Id, int K>
struct ExecArgvHook {
  static int call(const char* path, char* const argv[]) {
    on_process_image_ending(path);
    char* const* envp = environ;
    NMPROF_PUT_AGENT_BACK(envp);
    if (envp == environ) return hook_target<int (*)(const char*, char* const*)>(Id, K)(path, argv);
    return reinterpret_cast<Execve>(g_default_targets[Id == kExecv ? kExecve : kExecvpe])(path, argv, envp);
  }
};
template <int K>
using ExecvHook = ExecArgvHook<kExecv, K>;
template <int K>
using ExecvpHook = ExecArgvHook<kExecvp, K>;

// execl, execlp, execle take their arguments as a list; like glibc itself, collect
// them into an argv array and call the array form with an environment (execve,
// execvpe).
template <HookId Id, int K>
struct ExecListHook {
  static int call(const char* path, const char* arg, ...) {
    va_list args;
    va_start(args, arg);
    va_list counting;
    va_copy(counting, args);
    size_t argc = 0;
    for (const char* a = arg; a; a = va_arg(counting, const char*)) argc++;
    va_end(counting);
    auto argv = static_cast<const char**>(__builtin_alloca((argc + 1) * sizeof(const char*)));
    argv[0] = arg;
    for (size_t i = 1; i <= argc; i++) argv[i] = va_arg(args, const char*);  // ends with the NULL
    char* const* envp = Id == kExecle ? va_arg(args, char* const*) : environ;
    va_end(args);
    on_process_image_ending(path);
    auto array = const_cast<char* const*>(argv);
    NMPROF_PUT_AGENT_BACK(envp);
    return reinterpret_cast<Execve>(g_default_targets[Id == kExeclp ? kExecvpe : kExecve])(path, array, envp);
  }
};
template <int K>
using ExeclHook = ExecListHook<kExecl, K>;
template <int K>
using ExeclpHook = ExecListHook<kExeclp, K>;
template <int K>
using ExecleHook = ExecListHook<kExecle, K>;

#undef NMPROF_PUT_AGENT_BACK

// _exit, _Exit: (status).
template <HookId Id, int K>
struct ExitHook {
  [[noreturn]] static void call(int status) {
    on_process_ending();
    hook_target<void (*)(int)>(Id, K)(status);
    __builtin_unreachable();
  }
};
template <int K>
using UnderscoreExitHook = ExitHook<kUnderscoreExit, K>;
template <int K>
using UnderscoreUpperExitHook = ExitHook<kUnderscoreUpperExit, K>;

}  // namespace nmprof
