#include "agent/hooks/got_patcher.h"

#include <elf.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "agent/log.h"

namespace nmprof {

struct GotPatcher::Pass {
  GotPatcher& patcher;
  bool restore;
  bool deepbind;
  uint64_t restored_ids = ~uint64_t{0};  // a restore pass's functions, a bit per HookId
  size_t changed = 0;
  size_t failures = 0;  // slots left unpatched that a later pass may patch
  size_t unready = 0;   // modules left to a later pass: still being relocated
  bool bindings_exhausted = false;
};

namespace {

// What one module's dynamic section says, with addresses made absolute.
struct DynamicInfo {
  const ElfW(Sym)* symbols = nullptr;
  const char* strings = nullptr;
  size_t strings_size = 0;
  const ElfW(Rela)* rela = nullptr;
  size_t rela_size = 0;
  size_t relative_count = 0;  // DT_RELACOUNT: the R_X86_64_RELATIVE entries that open .rela.dyn
  const ElfW(Rela)* plt_rela = nullptr;
  size_t plt_rela_size = 0;
  bool plt_is_rela = true;
  bool symbolic = false;  // -Bsymbolic: the module binds to its own definitions first
};

struct ModuleLayout {
  uintptr_t base;
  uintptr_t start = UINTPTR_MAX, end = 0;  // mapped range
  uintptr_t relro_start = 0, relro_end = 0;  // read-only after relocation
  const ElfW(Dyn)* dynamic = nullptr;
};

ModuleLayout layout_of(const dl_phdr_info& info) {
  ModuleLayout m{info.dlpi_addr};
  uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (int i = 0; i < info.dlpi_phnum; i++) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    uintptr_t start = m.base + ph.p_vaddr;
    if (ph.p_type == PT_LOAD) {
      if (start < m.start) m.start = start;
      if (start + ph.p_memsz > m.end) m.end = start + ph.p_memsz;
    } else if (ph.p_type == PT_DYNAMIC) {
      m.dynamic = reinterpret_cast<const ElfW(Dyn)*>(start);
    } else if (ph.p_type == PT_GNU_RELRO) {
      // The dynamic linker protects whole pages only: the partial last page stays writable.
      m.relro_start = start & ~(page - 1);
      m.relro_end = (start + ph.p_memsz) & ~(page - 1);
    }
  }
  return m;
}

DynamicInfo read_dynamic(const ModuleLayout& m) {
  DynamicInfo d;
  // glibc rewrites most d_ptr values to absolute addresses; the vDSO's stay relative.
  auto absolute = [&m](ElfW(Addr) p) { return p < m.base ? p + m.base : p; };
  for (const ElfW(Dyn)* e = m.dynamic; e->d_tag != DT_NULL; e++) {
    switch (e->d_tag) {
      case DT_SYMTAB: d.symbols = reinterpret_cast<const ElfW(Sym)*>(absolute(e->d_un.d_ptr)); break;
      case DT_STRTAB: d.strings = reinterpret_cast<const char*>(absolute(e->d_un.d_ptr)); break;
      case DT_STRSZ: d.strings_size = e->d_un.d_val; break;
      case DT_RELA: d.rela = reinterpret_cast<const ElfW(Rela)*>(absolute(e->d_un.d_ptr)); break;
      case DT_RELASZ: d.rela_size = e->d_un.d_val; break;
      case DT_RELACOUNT: d.relative_count = e->d_un.d_val; break;
      case DT_JMPREL: d.plt_rela = reinterpret_cast<const ElfW(Rela)*>(absolute(e->d_un.d_ptr)); break;
      case DT_PLTRELSZ: d.plt_rela_size = e->d_un.d_val; break;
      case DT_PLTREL: d.plt_is_rela = e->d_un.d_val == DT_RELA; break;
      case DT_SYMBOLIC: d.symbolic = true; break;
      case DT_FLAGS: d.symbolic |= (e->d_un.d_val & DF_SYMBOLIC) != 0; break;
    }
  }
  return d;
}

// Every relocation of every module is looked up at each dlopen (PHP loads a score
// of extensions, and its executable has tens of thousands of relocations): the
// names' first two letters rule out nearly all of them before any strcmp.
int hooked_function_named(const char* name) {
  static_assert(kHookCount <= 64, "one bit per hooked function");
  struct Letters {
    uint64_t first[256] = {}, second[256] = {};  // the hooks whose name has that letter there
  };
  static const Letters letters = [] {
    Letters l;
    for (int id = 0; id < kHookCount; id++) {
      const auto* hook = reinterpret_cast<const unsigned char*>(g_hooked_functions[id].name);
      l.first[hook[0]] |= uint64_t{1} << id;
      l.second[hook[0] ? hook[1] : 0] |= uint64_t{1} << id;
    }
    return l;
  }();
  const auto* letter = reinterpret_cast<const unsigned char*>(name);
  uint64_t ids = letters.first[letter[0]];
  if (ids) ids &= letters.second[letter[1]];
  for (; ids; ids &= ids - 1) {
    int id = __builtin_ctzll(ids);
    if (strcmp(name, g_hooked_functions[id].name) == 0) return id;
  }
  return -1;
}

// Stores one slot, lifting the RELRO protection of its page for the moment.
bool store_slot(void** slot, void* value, const ModuleLayout& m) {
  auto at = reinterpret_cast<uintptr_t>(slot);
  if (at < m.relro_start || at >= m.relro_end) {
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
    return true;
  }
  uintptr_t page_size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  void* page = reinterpret_cast<void*>(at & ~(page_size - 1));
  if (mprotect(page, page_size, PROT_READ | PROT_WRITE) != 0) return false;
  __atomic_store_n(slot, value, __ATOMIC_RELEASE);
  mprotect(page, page_size, PROT_READ);
  return true;
}

// The dynamic linker lists a module (dl_iterate_phdr) before it has relocated it,
// while another thread's dlopen is still at work: its slots must not be patched then
// (a lazy jump slot gets the module's base added to what it holds). The jump slots
// are relocated last and in order. The last one, not relocated yet, still holds its
// link-time value: the offset of its PLT stub, which pushes the slot's index (after
// an endbr64 in modules built for IBT). A bound slot may hold a low address too (an
// executable mapped low), but not one where such a stub is. (A module without jump
// slots cannot be told: its unrelocated slots hold null, which is skipped.)
bool relocated(const dl_phdr_info& info, const ModuleLayout& m, const DynamicInfo& d) {
  size_t count = d.plt_rela ? d.plt_rela_size / sizeof(ElfW(Rela)) : 0;
  if (count == 0 || m.base == 0) return true;
  const ElfW(Rela)& last = d.plt_rela[count - 1];
  if (ELF64_R_TYPE(last.r_info) != R_X86_64_JUMP_SLOT) return true;
  uintptr_t value = __atomic_load_n(reinterpret_cast<const uintptr_t*>(m.base + last.r_offset), __ATOMIC_ACQUIRE);
  if (value >= m.end - m.base) return true;
  constexpr size_t kStub = 9;  // endbr64 (4 bytes), push imm32 (5)
  uintptr_t stub = m.base + value;
  bool in_code = false;
  for (int i = 0; i < info.dlpi_phnum && !in_code; i++) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    in_code = ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && stub >= m.base + ph.p_vaddr &&
              stub + kStub <= m.base + ph.p_vaddr + ph.p_memsz;
  }
  if (!in_code) return true;
  uint8_t push[5] = {0x68};
  uint32_t index = static_cast<uint32_t>(count - 1);
  memcpy(push + 1, &index, sizeof index);
  constexpr uint8_t kEndbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
  const auto* code = reinterpret_cast<const uint8_t*>(stub);
  bool stub_of_last = memcmp(code, push, sizeof push) == 0 ||
                      (memcmp(code, kEndbr64, sizeof kEndbr64) == 0 && memcmp(code + 4, push, sizeof push) == 0);
  return !stub_of_last;
}

}  // namespace

bool GotPatcher::PatchedModules::contains(uintptr_t base) const {
  for (size_t i = 0; i < count; i++)
    if (bases[i] == base) return true;
  return false;
}

void GotPatcher::PatchedModules::add(uintptr_t base) {
  if (count < kMax) bases[count++] = base;
}

int GotPatcher::visit_module(dl_phdr_info* info, size_t size, void* arg) {
  auto& pass = *static_cast<Pass*>(arg);
  PatchedModules& patched = pass.patcher.patched_;
  bool counts_unloads = size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs);
  if (!counts_unloads || info->dlpi_subs != patched.unloads) {
    patched.count = 0;
    patched.unloads = counts_unloads ? info->dlpi_subs : 0;
  }
  if (!pass.restore && patched.contains(info->dlpi_addr)) return 0;
  size_t failures_before = pass.failures;
  ModuleLayout m = layout_of(*info);
  auto own = reinterpret_cast<uintptr_t>(pass.patcher.own_code_);
  bool is_agent = own >= m.start && own < m.end;
  bool is_dynamic_linker = m.base != 0 && m.base == getauxval(AT_BASE);
  if (!m.dynamic || is_agent || is_dynamic_linker) return 0;
  DynamicInfo d = read_dynamic(m);
  if (!d.symbols || !d.strings || !d.plt_is_rela) return 0;
  if (!pass.restore && !relocated(*info, m, d)) {
    pass.unready++;  // another thread's dlopen is relocating it: a later pass patches it
    return 0;
  }

  auto visit_relocations = [&](const ElfW(Rela)* rela, size_t bytes) {
    if (!rela) return;
    for (size_t i = 0; i < bytes / sizeof(ElfW(Rela)); i++) {
      const ElfW(Rela)& r = rela[i];
      uint32_t type = ELF64_R_TYPE(r.r_info);
      uint32_t symbol_index = ELF64_R_SYM(r.r_info);
      bool slot_type = type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT ||
                       (type == R_X86_64_64 && r.r_addend == 0);
      if (!slot_type || symbol_index == 0) continue;
      const ElfW(Sym)& symbol = d.symbols[symbol_index];
      if (symbol.st_name >= d.strings_size) continue;
      int id = hooked_function_named(d.strings + symbol.st_name);
      if (id < 0) continue;
      auto slot = reinterpret_cast<void**>(m.base + r.r_offset);
      void* current = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
      HookId hooked_id;
      if (pass.restore) {
        if (!is_hook_entry(current, &hooked_id) || !(pass.restored_ids >> hooked_id & 1)) continue;
        for (int k = 0; k < kMaxBindings; k++) {
          if (g_hooked_functions[hooked_id].entries[k] != current) continue;
          if (store_slot(slot, g_hook_targets[hooked_id][k].load(std::memory_order_relaxed), m)) pass.changed++;
        }
        continue;
      }
      if (!pass.patcher.enabled_[id] || current == nullptr || current == g_canonical_entries[id] ||
          is_hook_entry(current))
        continue;
      // A jump slot still pointing into its own module's PLT is not bound yet (lazy
      // binding): bind it where the dynamic linker would.
      bool defines_it = symbol.st_shndx != SHN_UNDEF && symbol.st_value != 0;
      void* own_definition = defines_it ? reinterpret_cast<void*>(m.base + symbol.st_value) : nullptr;
      auto value = reinterpret_cast<uintptr_t>(current);
      void* original = current;
      if (type == R_X86_64_JUMP_SLOT && value >= m.start && value < m.end && current != own_definition)
        original = own_definition && (d.symbolic || pass.deepbind) ? own_definition : g_default_targets[id];
      int k = original ? bind_target(static_cast<HookId>(id), original) : -1;
      pass.bindings_exhausted |= original && k < 0;
      if (k >= 0 && store_slot(slot, g_hooked_functions[id].entries[k], m))
        pass.changed++;
      else
        pass.failures++;
    }
  };
  visit_relocations(d.plt_rela, d.plt_rela_size);
  // Relative relocations name no symbol: those the linker sorted first are skipped
  // at once (most of a large library's .rela.dyn, scanned again at each dlopen).
  size_t relative = d.rela && d.relative_count * sizeof(ElfW(Rela)) <= d.rela_size ? d.relative_count : 0;
  visit_relocations(d.rela + relative, d.rela_size - relative * sizeof(ElfW(Rela)));
  if (!pass.restore && pass.failures == failures_before) patched.add(info->dlpi_addr);
  return 0;
}

size_t GotPatcher::patch_all(bool deepbind) {
  Pass pass{*this, false, deepbind};
  lock_.lock(this_thread_id());
  dl_iterate_phdr(visit_module, &pass);
  complete_ = pass.unready == 0;
  lock_.unlock();
  if (pass.bindings_exhausted)
    log_line("more than %d different allocators in one process: some calls are not profiled", kMaxBindings);
  return pass.changed;
}

size_t GotPatcher::restore_all() { return restore(~uint64_t{0}); }

size_t GotPatcher::retire(uint64_t ids) {
  // Disabled under the lock: a pass that a dlopen began meanwhile patches them no more.
  lock_.lock(this_thread_id());
  for (int id = 0; id < kHookCount; id++)
    if (ids >> id & 1) enabled_[id] = false;
  lock_.unlock();
  return restore(ids);
}

size_t GotPatcher::restore(uint64_t ids) {
  Pass pass{*this, true, false, ids};
  lock_.lock(this_thread_id());
  dl_iterate_phdr(visit_module, &pass);
  patched_.count = 0;
  lock_.unlock();
  return pass.changed;
}

}  // namespace nmprof
