// A module as the dynamic loader mapped it (a dl_iterate_phdr entry), read in
// memory: its build id, which tells which build was loaded, and its dynamic symbols,
// which name its functions when its file on disk is no longer that build. The
// symbols are found through its PT_DYNAMIC segment (DT_SYMTAB, DT_STRTAB and
// DT_STRSZ, DT_VERSYM, counted by DT_HASH or DT_GNU_HASH) and copied out with
// process_vm_readv, so that an image unloaded meanwhile gives an error, not a fault.
#pragma once

#include <link.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/symbols/function_symbols.h"

namespace nmprof::symbols {

struct LoadedImage {
  uintptr_t bias = 0;   // runtime address = link-time address + bias
  uintptr_t begin = 0;  // its mapped range
  uintptr_t end = 0;
  uintptr_t dynamic = 0;  // its PT_DYNAMIC segment; 0 when it has none
  size_t dynamic_size = 0;

  // From its program headers (nothing else is read).
  static LoadedImage of(const dl_phdr_info& info);
};

// The GNU build id of a loaded module, hex, read in place from its PT_NOTE segments
// that a PT_LOAD maps: only while dl_iterate_phdr lists it (it is mapped then).
std::string loaded_build_id(const dl_phdr_info& info);
// Whether a loaded module has a note of `name` and `type` with a descriptor, read as above.
bool has_loaded_note(const dl_phdr_info& info, std::string_view name, uint32_t type);

// A copy of a loaded image's dynamic symbol table; table() views it.
class LoadedSymbols {
 public:
  // Returns nothing and sets *error when the image has no dynamic symbols or its
  // memory cannot be read.
  static std::optional<LoadedSymbols> copy(const LoadedImage& image, std::string* error);
  SymbolTableData table() const;

 private:
  uint64_t code_end_ = 0;  // link-time end of the image: bounds a zero-size symbol
  std::vector<std::byte> symbols_, strings_, versions_;
};

}  // namespace nmprof::symbols
