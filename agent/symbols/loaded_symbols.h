// The dynamic symbols of a module as the dynamic loader mapped it: what names its
// functions when its file on disk is no longer the image that is loaded. Found
// through its PT_DYNAMIC segment (DT_SYMTAB, DT_STRTAB and DT_STRSZ, DT_VERSYM,
// counted by DT_HASH or DT_GNU_HASH) and copied out with process_vm_readv, so that
// an image unloaded meanwhile gives an error rather than a fault.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/symbols/function_symbols.h"

namespace nmprof::symbols {

struct LoadedImage {
  uintptr_t bias = 0;  // runtime address = link-time address + bias
  uintptr_t begin = 0;  // its mapped range
  uintptr_t end = 0;
  uintptr_t dynamic = 0;  // its PT_DYNAMIC segment; 0 when it has none
  size_t dynamic_size = 0;
};

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
