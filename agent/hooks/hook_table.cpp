#include "agent/hooks/hook_table.h"

#include "agent/hooks/allocation_hooks.h"
#include "agent/hooks/block_sizes.h"
#include "agent/hooks/descriptor_hooks.h"
#include "agent/hooks/process_hooks.h"
#include "agent/hooks/seccomp_hooks.h"
#include "agent/hooks/user_id_hooks.h"
#include "agent/hooks/signal_hooks.h"
#include "agent/hooks/symbol_binding.h"

namespace nmprof {

const HookedFunction g_hooked_functions[kHookCount] = {
    {"malloc", NMPROF_HOOK_ENTRIES(MallocHook)},
    {"calloc", NMPROF_HOOK_ENTRIES(CallocHook)},
    {"realloc", NMPROF_HOOK_ENTRIES(ReallocHook)},
    {"reallocarray", NMPROF_HOOK_ENTRIES(ReallocarrayHook)},
    {"free", NMPROF_HOOK_ENTRIES(FreeHook)},
    {"posix_memalign", NMPROF_HOOK_ENTRIES(PosixMemalignHook)},
    {"aligned_alloc", NMPROF_HOOK_ENTRIES(AlignedAllocHook)},
    {"memalign", NMPROF_HOOK_ENTRIES(MemalignHook)},
    {"valloc", NMPROF_HOOK_ENTRIES(VallocHook)},
    {"pvalloc", NMPROF_HOOK_ENTRIES(PvallocHook)},
    {"dlopen", NMPROF_HOOK_ENTRIES(DlopenHook)},
    {"dlmopen", NMPROF_HOOK_ENTRIES(DlmopenHook)},
    {"dlclose", NMPROF_HOOK_ENTRIES(DlcloseHook)},
    {"dlsym", NMPROF_HOOK_ENTRIES(DlsymHook)},
    {"execve", NMPROF_HOOK_ENTRIES(ExecveHook)},
    {"execv", NMPROF_HOOK_ENTRIES(ExecvHook)},
    {"execvp", NMPROF_HOOK_ENTRIES(ExecvpHook)},
    {"execvpe", NMPROF_HOOK_ENTRIES(ExecvpeHook)},
    {"execl", NMPROF_HOOK_ENTRIES(ExeclHook)},
    {"execlp", NMPROF_HOOK_ENTRIES(ExeclpHook)},
    {"execle", NMPROF_HOOK_ENTRIES(ExecleHook)},
    {"_exit", NMPROF_HOOK_ENTRIES(UnderscoreExitHook)},
    {"_Exit", NMPROF_HOOK_ENTRIES(UnderscoreUpperExitHook)},
    {"sysconf", NMPROF_HOOK_ENTRIES(SysconfHook)},
    {"sigaction", NMPROF_HOOK_ENTRIES(SigactionHook)},
    {"signal", NMPROF_HOOK_ENTRIES(SignalHook)},
    {"setuid", NMPROF_HOOK_ENTRIES(SetuidHook)},
    {"seteuid", NMPROF_HOOK_ENTRIES(SeteuidHook)},
    {"setreuid", NMPROF_HOOK_ENTRIES(SetreuidHook)},
    {"setresuid", NMPROF_HOOK_ENTRIES(SetresuidHook)},
    {"close", NMPROF_HOOK_ENTRIES(CloseHook)},
    {"close_range", NMPROF_HOOK_ENTRIES(CloseRangeHook)},
    {"closefrom", NMPROF_HOOK_ENTRIES(ClosefromHook)},
    {"dup2", NMPROF_HOOK_ENTRIES(Dup2Hook)},
    {"dup3", NMPROF_HOOK_ENTRIES(Dup3Hook)},
    {"prctl", NMPROF_HOOK_ENTRIES(PrctlHook)},
    {"syscall", NMPROF_HOOK_ENTRIES(SyscallHook)},
};

std::atomic<void*> g_hook_targets[kHookCount][kMaxBindings];
void* g_default_targets[kHookCount];

void* g_canonical_entries[kHookCount];

void look_up_default_targets() {
  // This function is the agent's own code: its module is never a definition.
  auto own_code = reinterpret_cast<const void*>(&look_up_default_targets);
  for (int id = 0; id < kHookCount; id++) {
    SymbolBinding binding = symbol_binding(g_hooked_functions[id].name, own_code);
    g_default_targets[id] = binding.definition;
    g_canonical_entries[id] = binding.canonical_entry;
  }
}

int bind_target(HookId id, void* original) {
  for (int k = 0; k < kMaxBindings; k++) {
    void* current = g_hook_targets[id][k].load(std::memory_order_acquire);
    bool bound = current == original;
    // Targets are only ever set, never changed, so a hook never sees its target move.
    if (!bound && current == nullptr)
      bound = g_hook_targets[id][k].compare_exchange_strong(current, original, std::memory_order_acq_rel) ||
              current == original;
    if (bound) {
      learn_block_size(id, k, original);  // before any slot reaches the binding
      return k;
    }
  }
  return -1;
}

bool is_hook_entry(void* p, HookId* which) {
  for (int id = 0; id < kHookCount; id++) {
    for (void* entry : g_hooked_functions[id].entries) {
      if (entry == p) {
        if (which) *which = static_cast<HookId>(id);
        return true;
      }
    }
  }
  return false;
}

}  // namespace nmprof
