// The function symbols of one ELF module, for turning native pcs into names.
//
// Loading (once per module) takes the file's .symtab, else the .symtab of its
// separate debug file (debug_file.h), else its .dynsym: the first of these that
// has function symbols. function_symbols.h tells which name an address keeps.
// The names are copied, so no mapping of the file outlives loading. A module whose
// file is no longer the build that was loaded (image_identity.h) takes the .dynsym
// the loaded image has in memory (loaded_image.h).
//
// Overlapping symbols (there are none in libc or libjvm) resolve to the one
// that starts nearest below the address, and to nothing past its end.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agent/symbols/debug_file.h"
#include "agent/symbols/function_symbols.h"
#include "agent/symbols/image_identity.h"
#include "agent/symbols/loaded_image.h"

namespace nmprof::symbols {

struct Symbol {
  std::string_view name;  // demangled; valid while the table lives
  uint64_t start;         // link-time address
  uint64_t size;
};

class SymbolTable {
 public:
  // Loads the symbols of the ELF file at `path`. Returns nullptr and sets *error
  // (which must not be null) if the file cannot be read or is not a well-formed
  // ELF64 file; a valid file without function symbols gives an empty table.
  // Never throws. The file must not shrink while it loads: that would be SIGBUS.
  static std::unique_ptr<SymbolTable> from_file(const std::string& path, std::string* error,
                                                const std::string& debug_root = kSystemDebugRoot);
  // The file of a loaded module, and which build of it was loaded.
  struct LoadedFile {
    std::string path;       // as it was loaded: its debug link is looked for beside it
    std::string open_path;  // what to read: the path, or a name that still reaches the image loaded
    const ImageIdentity& loaded;
  };
  // from_file, but only if the file is still the build that was loaded; otherwise
  // nullptr, *error saying what differs and *replaced set.
  static std::unique_ptr<SymbolTable> from_loaded_file(const LoadedFile& file, std::string* error, bool* replaced,
                                                       const std::string& debug_root = kSystemDebugRoot);
  // The dynamic symbols of a loaded image, read in memory (loaded_image.h).
  static std::unique_ptr<SymbolTable> from_loaded_image(const LoadedImage& image, std::string* error);
  // Loads the symbols of an ELF image in memory: the vDSO (vdso.h).
  static std::unique_ptr<SymbolTable> from_memory(std::span<const std::byte> image, std::string* error);

  // The symbol containing `link_time_address`, which for a pc is the pc minus the
  // module's load bias (dl_iterate_phdr's dlpi_addr; 0 for a non-PIE executable).
  // Callers pass a return address minus 1, so that a call at the end of a function
  // stays in it. O(log n); a name is demangled on its symbol's first lookup and
  // cached. Not thread-safe, not even against itself (it fills the cache): the
  // caller serializes lookups on one table.
  std::optional<Symbol> find(uint64_t link_time_address);

  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    uint64_t start;
    uint64_t size;
    uint32_t name_offset;  // into names_
    uint32_t name_length;
    uint32_t demangled;    // kNotDemangled, kSameAsName or an index into demangled_
  };
  static constexpr uint32_t kNotDemangled = UINT32_MAX;
  static constexpr uint32_t kSameAsName = UINT32_MAX - 1;

  explicit SymbolTable(const std::vector<FunctionSymbol>& functions);
  static std::unique_ptr<SymbolTable> load(const std::string& open_path, const std::string& path,
                                           const ImageIdentity* loaded, std::string* error, bool* replaced,
                                           const std::string& debug_root);
  std::string_view demangled_name(Entry& entry);

  std::vector<Entry> entries_;
  std::string names_;                  // mangled names, back to back
  std::deque<std::string> demangled_;  // a deque never moves its elements: names handed out stay valid
};

}  // namespace nmprof::symbols
