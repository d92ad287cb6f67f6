// Where the dynamic linker binds a function's name, found as it finds it but without
// asking it: dlsym(RTLD_DEFAULT) answers with a non-PIE executable's canonical PLT
// entry when the executable takes the function's address (the symbol is undefined
// there but has a value, so that `&malloc` compares equal everywhere). That entry
// jumps through the executable's own jump slot, which the GOT patcher points at a
// hook: a hook forwarding to it would call itself forever (Debian's python3).
//
// Lookups read each module's dynamic symbol table through its hash table: no dlsym,
// which allocates from the host's heap on a failed lookup.
#pragma once

#include <link.h>

namespace nmprof {

// The function `name` as the module at `base` with dynamic section `dynamic` defines
// it (a default-version, global or weak STT_FUNC); null when it does not.
void* function_defined_in(ElfW(Addr) base, const ElfW(Dyn)* dynamic, const char* name);

struct SymbolBinding {
  // Where a jump slot for the name binds: the first module in load order that defines
  // it, the agent excepted. Null when none does (or the definition is an IFUNC, which
  // only the dynamic linker resolves: then dlsym's answer, when it is no canonical entry).
  void* definition = nullptr;
  // A non-PIE executable's PLT entry that stands for the function's address, which
  // other modules' GLOB_DAT slots hold; null when no module has one.
  void* canonical_entry = nullptr;
};

// own_code: an address inside the agent, whose module is never the answer.
SymbolBinding symbol_binding(const char* name, const void* own_code);

}  // namespace nmprof
