// The functions nmprof intercepts. Each has kMaxBindings entry points: the GOT
// patcher gives every distinct function a slot was bound to (libc's malloc, a
// bundled jemalloc, ...) its own binding index k, and entry point k forwards to
// targets[k], so a patched slot always reaches the function it was bound to before.
#pragma once

#include <atomic>
#include <cstddef>

namespace nmprof {

constexpr int kMaxBindings = 4;

enum HookId {
  kMalloc,
  kCalloc,
  kRealloc,
  kReallocarray,
  kFree,
  kPosixMemalign,
  kAlignedAlloc,
  kMemalign,
  kValloc,
  kPvalloc,
  kDlopen,
  kDlmopen,
  kDlclose,
  kDlsym,
  kExecve,
  kExecv,
  kExecvp,
  kExecvpe,
  kExecl,
  kExeclp,
  kExecle,
  kUnderscoreExit,
  kUnderscoreUpperExit,
  kSysconf,
  kSigaction,
  kSignal,
  kSetuid,
  kSeteuid,
  kSetreuid,
  kSetresuid,
  kClose,
  kCloseRange,
  kClosefrom,
  kDup2,
  kDup3,
  kPrctl,
  kSyscall,
  kHookCount
};

struct HookedFunction {
  const char* name;
  void* entries[kMaxBindings];  // entries[k] forwards to targets[k]
};

extern const HookedFunction g_hooked_functions[kHookCount];
extern std::atomic<void*> g_hook_targets[kHookCount][kMaxBindings];
// Where a slot that the dynamic linker has not bound yet (lazy binding) will bind:
// the global definition, looked up once at startup (symbol_binding.h).
extern void* g_default_targets[kHookCount];
// A non-PIE executable's PLT entry standing for the function's address, or null.
// Slots holding it are left alone: the entry jumps through the executable's own
// jump slot, which is patched, and programs compare such pointers with `&malloc`.
extern void* g_canonical_entries[kHookCount];

void look_up_default_targets();

// The binding index for `original` (taking a free one if new), or -1 when all
// kMaxBindings are taken by other functions.
int bind_target(HookId id, void* original);
// True when p is one of our entry points (a slot that is patched already).
bool is_hook_entry(void* p, HookId* id = nullptr);

template <typename Fn>
inline Fn hook_target(HookId id, int k) {
  return reinterpret_cast<Fn>(g_hook_targets[id][k].load(std::memory_order_relaxed));
}

// Expands to the kMaxBindings entry points of Hook<0..3>::call.
#define NMPROF_HOOK_ENTRIES(Hook)                                                            \
  {                                                                                          \
    reinterpret_cast<void*>(&Hook<0>::call), reinterpret_cast<void*>(&Hook<1>::call),        \
        reinterpret_cast<void*>(&Hook<2>::call), reinterpret_cast<void*>(&Hook<3>::call)     \
  }

}  // namespace nmprof
