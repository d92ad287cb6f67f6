#include "agent/hooks/symbol_binding.h"

#include <dlfcn.h>
#include <elf.h>

#include <cstdint>
#include <cstring>

namespace nmprof {

namespace {

// What a lookup needs of one module's dynamic section, with runtime addresses.
struct DynamicSymbols {
  ElfW(Addr) base = 0;
  const ElfW(Sym)* symbols = nullptr;
  const char* strings = nullptr;
  const uint16_t* versions = nullptr;  // DT_VERSYM, by symbol index
  const uint32_t* gnu_hash = nullptr;
  const uint32_t* hash = nullptr;

  DynamicSymbols(ElfW(Addr) module_base, const ElfW(Dyn)* dynamic) : base(module_base) {
    // glibc rewrites these to runtime addresses in place (the vDSO's stay relative).
    auto runtime = [this](ElfW(Addr) value) { return value < base ? value + base : value; };
    for (const ElfW(Dyn)* entry = dynamic; entry && entry->d_tag != DT_NULL; entry++) {
      ElfW(Addr) at = runtime(entry->d_un.d_ptr);
      switch (entry->d_tag) {
        case DT_SYMTAB: symbols = reinterpret_cast<const ElfW(Sym)*>(at); break;
        case DT_STRTAB: strings = reinterpret_cast<const char*>(at); break;
        case DT_VERSYM: versions = reinterpret_cast<const uint16_t*>(at); break;
        case DT_GNU_HASH: gnu_hash = reinterpret_cast<const uint32_t*>(at); break;
        case DT_HASH: hash = reinterpret_cast<const uint32_t*>(at); break;
      }
    }
  }

  // Calls visit(symbol) for each symbol of the name's hash chain until it returns true.
  template <typename Visit>
  const ElfW(Sym)* find(const char* name, Visit visit) const {
    if (!symbols || !strings) return nullptr;
    auto matches = [&](uint32_t index) {
      const ElfW(Sym)& symbol = symbols[index];
      return strcmp(strings + symbol.st_name, name) == 0 && visit(symbol, versions ? versions[index] : 1);
    };
    if (gnu_hash) {
      // nbuckets, symoffset, bloom words (64-bit), bloom shift; then bloom, buckets, chains.
      uint32_t buckets = gnu_hash[0], first = gnu_hash[1], bloom_words = gnu_hash[2];
      if (buckets == 0) return nullptr;
      const uint32_t* bucket = gnu_hash + 4 + 2 * bloom_words;
      const uint32_t* chain = bucket + buckets;
      uint32_t h = 5381;
      for (const char* c = name; *c; c++) h = h * 33 + static_cast<unsigned char>(*c);
      for (uint32_t i = bucket[h % buckets]; i >= first; i++) {
        uint32_t link = chain[i - first];
        if ((link | 1) == (h | 1) && matches(i)) return &symbols[i];
        if (link & 1) break;  // the end of this bucket's chain
      }
      return nullptr;
    }
    if (!hash || hash[0] == 0) return nullptr;
    // nbucket, nchain; then buckets, chains.
    uint32_t h = 0;
    for (const char* c = name; *c; c++) {
      h = (h << 4) + static_cast<unsigned char>(*c);
      h = (h ^ ((h & 0xf0000000u) >> 24)) & 0x0fffffffu;
    }
    const uint32_t* bucket = hash + 2;
    const uint32_t* chain = bucket + hash[0];
    for (uint32_t i = bucket[h % hash[0]]; i != 0; i = chain[i])
      if (matches(i)) return &symbols[i];
    return nullptr;
  }
};

constexpr uint16_t kHiddenVersion = 0x8000;  // VERSYM: reachable only by explicit version

bool global_function(const ElfW(Sym)& symbol, uint16_t version) {
  unsigned type = ELF64_ST_TYPE(symbol.st_info), bind = ELF64_ST_BIND(symbol.st_info);
  return (type == STT_FUNC || type == STT_GNU_IFUNC) && (bind == STB_GLOBAL || bind == STB_WEAK) &&
         (version & kHiddenVersion) == 0;
}

bool defines(const ElfW(Sym)& symbol, uint16_t version) {
  return global_function(symbol, version) && symbol.st_shndx != SHN_UNDEF && symbol.st_value != 0;
}

// An undefined symbol with a value: the executable's PLT entry is the function's address.
bool canonical_entry(const ElfW(Sym)& symbol, uint16_t version) {
  return global_function(symbol, version) && symbol.st_shndx == SHN_UNDEF && symbol.st_value != 0;
}

struct Search {
  const char* name;
  uintptr_t own_code;
  SymbolBinding binding;
  bool definition_is_ifunc = false;
};

int visit_module(dl_phdr_info* info, size_t, void* arg) {
  auto& search = *static_cast<Search*>(arg);
  const ElfW(Dyn)* dynamic = nullptr;
  bool is_agent = false;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_DYNAMIC) dynamic = reinterpret_cast<const ElfW(Dyn)*>(start);
    if (ph.p_type == PT_LOAD && search.own_code >= start && search.own_code - start < ph.p_memsz) is_agent = true;
  }
  if (!dynamic || is_agent) return 0;
  DynamicSymbols module(info->dlpi_addr, dynamic);
  if (!search.binding.canonical_entry) {
    if (const ElfW(Sym)* entry = module.find(search.name, canonical_entry))
      search.binding.canonical_entry = reinterpret_cast<void*>(info->dlpi_addr + entry->st_value);
  }
  if (const ElfW(Sym)* definition = module.find(search.name, defines)) {
    search.binding.definition = reinterpret_cast<void*>(info->dlpi_addr + definition->st_value);
    search.definition_is_ifunc = ELF64_ST_TYPE(definition->st_info) == STT_GNU_IFUNC;
    return 1;  // the first definition is the one a jump slot binds to
  }
  return 0;
}

}  // namespace

void* function_defined_in(ElfW(Addr) base, const ElfW(Dyn)* dynamic, const char* name) {
  const ElfW(Sym)* symbol =
      DynamicSymbols(base, dynamic).find(name, [](const ElfW(Sym)& s, uint16_t version) {
        return defines(s, version) && ELF64_ST_TYPE(s.st_info) == STT_FUNC;
      });
  return symbol ? reinterpret_cast<void*>(base + symbol->st_value) : nullptr;
}

SymbolBinding symbol_binding(const char* name, const void* own_code) {
  Search search{name, reinterpret_cast<uintptr_t>(own_code), {}};
  dl_iterate_phdr(visit_module, &search);
  if (search.definition_is_ifunc) {
    // The resolver's choice is the dynamic linker's to make.
    void* resolved = dlsym(RTLD_DEFAULT, name);
    search.binding.definition = resolved != search.binding.canonical_entry ? resolved : nullptr;
  }
  return search.binding;
}

}  // namespace nmprof
