#include "agent/symbols/symbol_table.h"

#include <algorithm>
#include <new>

#include "formats/mangling/demangle.h"

namespace nmprof::symbols {

std::unique_ptr<SymbolTable> SymbolTable::from_file(const std::string& path, std::string* error,
                                                    const std::string& debug_root) {
  return load(path, path, nullptr, error, nullptr, debug_root);
}

std::unique_ptr<SymbolTable> SymbolTable::from_loaded_file(const LoadedFile& file, std::string* error, bool* replaced,
                                                           const std::string& debug_root) {
  *replaced = false;
  return load(file.open_path, file.path, &file.loaded, error, replaced, debug_root);
}

std::unique_ptr<SymbolTable> SymbolTable::load(const std::string& open_path, const std::string& path,
                                               const ImageIdentity* loaded, std::string* error, bool* replaced,
                                               const std::string& debug_root) try {
  auto file = map_elf_file(open_path, error);
  if (!file) return nullptr;
  auto image = elf::ElfImage::parse(std::as_bytes(file->bytes()), error);
  if (!image) {
    *error = open_path + ": " + *error;
    return nullptr;
  }
  if (loaded) {
    if (auto difference = loaded->difference(*image, file->status())) {
      *error = std::move(*difference);
      *replaced = true;
      return nullptr;
    }
  }
  std::vector<FunctionSymbol> functions = read_function_symbols(*image, SHT_SYMTAB);
  // `debug` stays mapped until the table has copied the names.
  std::optional<DebugFile> debug = functions.empty() ? find_debug_file(*image, path, debug_root) : std::nullopt;
  if (debug) functions = read_function_symbols(debug->image, SHT_SYMTAB);
  if (functions.empty()) functions = read_function_symbols(*image, SHT_DYNSYM);
  return std::unique_ptr<SymbolTable>(new SymbolTable(functions));
} catch (...) {  // only allocation can fail
  *error = "out of memory";  // short enough not to allocate
  return nullptr;
}

std::unique_ptr<SymbolTable> SymbolTable::from_loaded_image(const LoadedImage& image, std::string* error) try {
  auto symbols = LoadedSymbols::copy(image, error);
  if (!symbols) return nullptr;
  return std::unique_ptr<SymbolTable>(new SymbolTable(read_function_symbols(symbols->table())));
} catch (...) {
  *error = "out of memory";
  return nullptr;
}

std::unique_ptr<SymbolTable> SymbolTable::from_memory(std::span<const std::byte> bytes, std::string* error) try {
  auto image = elf::ElfImage::parse(bytes, error);
  if (!image) return nullptr;
  std::vector<FunctionSymbol> functions = read_function_symbols(*image, SHT_SYMTAB);
  if (functions.empty()) functions = read_function_symbols(*image, SHT_DYNSYM);
  return std::unique_ptr<SymbolTable>(new SymbolTable(functions));
} catch (...) {
  *error = "out of memory";
  return nullptr;
}

SymbolTable::SymbolTable(const std::vector<FunctionSymbol>& functions) {
  size_t name_bytes = 0;
  for (const FunctionSymbol& function : functions) name_bytes += function.name.size();
  if (name_bytes > UINT32_MAX) throw std::bad_alloc();  // Entry's 32-bit offsets
  names_.reserve(name_bytes);
  entries_.reserve(functions.size());
  for (const FunctionSymbol& function : functions) {
    entries_.push_back({function.start, function.size, static_cast<uint32_t>(names_.size()),
                        static_cast<uint32_t>(function.name.size()), kNotDemangled});
    names_ += function.name;
  }
}

std::optional<Symbol> SymbolTable::find(uint64_t link_time_address) {
  auto after = std::upper_bound(entries_.begin(), entries_.end(), link_time_address,
                                [](uint64_t address, const Entry& entry) { return address < entry.start; });
  if (after == entries_.begin()) return std::nullopt;
  Entry& entry = *(after - 1);
  if (link_time_address - entry.start >= entry.size) return std::nullopt;
  return Symbol{demangled_name(entry), entry.start, entry.size};
}

std::string_view SymbolTable::demangled_name(Entry& entry) {
  std::string_view name(names_.data() + entry.name_offset, entry.name_length);
  if (entry.demangled == kNotDemangled) {
    try {
      std::string demangled = demangle(name);
      if (demangled == name) {
        entry.demangled = kSameAsName;
      } else {
        demangled_.push_back(std::move(demangled));
        entry.demangled = static_cast<uint32_t>(demangled_.size() - 1);
      }
    } catch (...) {  // out of memory: the mangled name will do, and the next lookup tries again
      return name;
    }
  }
  return entry.demangled == kSameAsName ? name : std::string_view(demangled_[entry.demangled]);
}

}  // namespace nmprof::symbols
