// Redirects calls to the hooked functions by rewriting GOT slots: PLT jump slots,
// and the GLOB_DAT / absolute relocations that -fno-plt code and function-pointer
// tables use, in every loaded module except the agent itself and the dynamic linker.
//
// No list of slots is kept: which function a patched slot belonged to is recoverable
// from the slot itself (hook entry k of function f forwards to f's target k), so
// patching is an idempotent pass over what is loaded now and restoring is another
// pass; nothing can go stale when a library is unloaded. A pass skips the modules an
// earlier one patched whole (PHP dlopens a score of extensions, and its executable
// has tens of thousands of relocations to look at again after each).
#pragma once

#include <link.h>

#include <cstddef>

#include "agent/hooks/hook_table.h"
#include "agent/safety/spin_lock.h"

namespace nmprof {

class GotPatcher {
 public:
  // own_code: any address inside the agent, whose own slots are never patched.
  explicit GotPatcher(const void* own_code) : own_code_(own_code) {}

  // Chooses which functions are patched (e.g. free only when frees are tracked).
  void set_enabled(HookId id, bool enabled) {
    enabled_[id] = enabled;
    patched_.count = 0;
  }

  // Patches every slot not patched yet. deepbind: libraries that appeared since the
  // last pass were opened with RTLD_DEEPBIND (their unbound slots bind to their own
  // definitions first). Returns the number of slots newly patched.
  size_t patch_all(bool deepbind = false);
  // Whether the last patch_all() left no module for a later pass: one that another
  // thread's dlopen was still relocating.
  bool complete() const { return complete_; }
  // Puts the original function back into every patched slot.
  size_t restore_all();
  // The same for the functions of `ids` (a bit per HookId) only, which later passes
  // leave alone until set_enabled() says otherwise.
  size_t retire(uint64_t ids);
  // After fork() in the child: the lock may have been held by a thread that is gone.
  void reset_lock() { lock_.unlock(); }

 private:
  struct Pass;
  static int visit_module(dl_phdr_info* info, size_t size, void* pass);
  size_t restore(uint64_t ids);

  // The modules whose every slot is patched, by load address. A dlopen adds modules
  // and changes no loaded module's slots. The list is void once a module was unloaded
  // (its address may now be another's) or the patched functions changed.
  struct PatchedModules {
    static constexpr size_t kMax = 512;  // past that, the others are visited each pass
    uintptr_t bases[kMax];
    size_t count = 0;
    unsigned long long unloads = 0;  // dl_phdr_info::dlpi_subs when it was made
    bool contains(uintptr_t base) const;
    void add(uintptr_t base);
  };

  const void* own_code_;
  bool enabled_[kHookCount] = {};
  PatchedModules patched_;
  bool complete_ = false;
  SpinLock lock_;  // one pass at a time: passes toggle page protections
};

}  // namespace nmprof
