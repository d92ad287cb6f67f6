// Reading the function symbols (STT_FUNC, STT_GNU_IFUNC) of an ELF symbol table,
// one per address.
//
// Aliases (several names at one address) keep the most useful name, by these
// rules in order: exported (global or weak binding) over local; default or
// unversioned over a non-default version (name@VER, or hidden in .gnu.version);
// fewer leading underscores (malloc over __libc_malloc); global over weak; then
// the alphabetically first, so that the choice is deterministic. Version
// suffixes ("@@GLIBC_2.14") are not part of the name. An alias group's size is
// the largest of its members'.
//
// A symbol of size 0 (hand-written assembly without .size) is taken to extend to
// the next symbol or the end of its section.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "formats/elf/elf_image.h"

namespace nmprof::symbols {

struct FunctionSymbol {
  uint64_t start;
  uint64_t size;
  std::string_view name;  // views the image's string table
};

// The functions of the image's first section of `type` (SHT_SYMTAB or
// SHT_DYNSYM), sorted by start; empty if there is no such section.
std::vector<FunctionSymbol> read_function_symbols(const elf::ElfImage& image, uint32_t type);

// A symbol table wherever it was found: a file's sections, or a loaded image's
// dynamic segment (loaded_image.h).
struct SymbolTableData {
  elf::SymbolSection entries;
  // Where the code of a symbol's section (or segment) ends, as a link-time address;
  // nothing for a symbol defined nowhere (undefined, SHN_ABS and the like).
  std::function<std::optional<uint64_t>(const Elf64_Sym&)> code_end;
};

// The same, from such a table.
std::vector<FunctionSymbol> read_function_symbols(const SymbolTableData& table);

}  // namespace nmprof::symbols
