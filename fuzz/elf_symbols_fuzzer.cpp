// Fuzzes the ELF symbol reader as the agent meets it in a library it maps: the
// header and section checks, the function symbols of .symtab and .dynsym, the
// build-id and debuglink notes, and lookups (which demangle) at every symbol found.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "agent/symbols/function_symbols.h"
#include "agent/symbols/symbol_table.h"
#include "formats/elf/elf_image.h"

namespace {

using namespace nmprof::symbols;
using nmprof::elf::ElfImage;

// Enough lookups to demangle a library's worth of names without slowing each run.
constexpr size_t kMaxLookups = 512;

void look_up_symbols_of(const ElfImage& image, SymbolTable& table) {
  size_t lookups = 0;
  for (uint32_t type : {SHT_SYMTAB, SHT_DYNSYM}) {
    for (const FunctionSymbol& symbol : read_function_symbols(image, type)) {
      if (lookups++ == kMaxLookups) return;
      table.find(symbol.start);
      table.find(symbol.start + symbol.size);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  std::string error;
  std::optional<ElfImage> image = ElfImage::parse(bytes, &error);
  if (!image) return 0;
  image->build_id();
  image->debug_link();
  std::unique_ptr<SymbolTable> table = SymbolTable::from_memory(bytes, &error);
  if (table) look_up_symbols_of(*image, *table);
  return 0;
}
