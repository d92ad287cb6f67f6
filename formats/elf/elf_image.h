// A validated, read-only view of an ELF64 image: a mapped file or the vDSO in
// memory, read by the agent's symbolizer, by the attach client (the target's own
// libraries) and by the report. parse() checks the header and that every section
// lies inside the image; accessors copy structures out with memcpy, so misaligned
// or hostile data cannot fault, and every offset read from the data is checked again.
#pragma once

#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nmprof::elf {

// Copies a T out of `bytes` at `offset`, or nothing if it does not fit.
template <typename T>
std::optional<T> read_at(std::span<const std::byte> bytes, uint64_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return std::nullopt;
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

// The NUL-terminated string at `offset` in a string table, or "" if it is out of
// bounds or unterminated.
std::string_view string_at(std::span<const std::byte> table, uint64_t offset);

// The descriptor of the first note of `name` and `type` among `notes` (a note section
// or PT_NOTE segment, whose entries are padded to `alignment`, 4 or 8), empty if there
// is none (or it has no descriptor).
std::span<const std::byte> find_note(std::span<const std::byte> notes, uint64_t alignment, std::string_view name,
                                     uint32_t type);
// The NT_GNU_BUILD_ID note's descriptor.
std::span<const std::byte> find_build_id(std::span<const std::byte> notes, uint64_t alignment);

// Bytes as lowercase hex digits, as build ids are spelled.
std::string hex_text(std::span<const std::byte> bytes);

struct DebugLink {
  std::string_view file_name;
  uint32_t crc;
};

// A symbol table section (SHT_SYMTAB or SHT_DYNSYM) with what reading it needs.
struct SymbolSection {
  std::span<const std::byte> symbols;   // Elf64_Sym entries
  std::span<const std::byte> strings;   // their string table
  std::span<const std::byte> versions;  // .gnu.version, parallel to a .dynsym; empty for a .symtab
};

class ElfImage {
 public:
  // Whether an image without a section header table is refused (the symbolizer reads
  // sections only, and takes another way to the names when there are none) or read
  // with no sections (the attach client reads program headers too).
  enum class Sections { Required, Optional };
  static std::optional<ElfImage> parse(std::span<const std::byte> bytes, std::string* error,
                                       Sections sections = Sections::Required);

  const Elf64_Ehdr& header() const { return header_; }
  // The program headers; empty when the image has none, or they lie outside it.
  const std::vector<Elf64_Phdr>& segments() const { return segments_; }

  std::span<const std::byte> bytes() const { return bytes_; }
  const std::vector<Elf64_Shdr>& sections() const { return sections_; }
  // The section at `index`, or nullptr (index 0 is the null section).
  const Elf64_Shdr* section(size_t index) const;
  // The first section of a type or with a name, or nullptr.
  const Elf64_Shdr* find_section(uint32_t type) const;
  const Elf64_Shdr* find_section(std::string_view name) const;
  // A section's contents; empty for SHT_NOBITS.
  std::span<const std::byte> contents(const Elf64_Shdr& section) const;
  // The first section of `type` (SHT_SYMTAB or SHT_DYNSYM) with entries of Elf64_Sym's
  // size and a string table, or nothing.
  std::optional<SymbolSection> symbol_section(uint32_t type) const;

  // The NT_GNU_BUILD_ID note's bytes, empty if there is none.
  std::span<const std::byte> build_id() const;
  std::optional<DebugLink> debug_link() const;

 private:
  ElfImage(std::span<const std::byte> bytes, const Elf64_Ehdr& header, std::vector<Elf64_Phdr> segments,
           std::vector<Elf64_Shdr> sections)
      : bytes_(bytes), header_(header), segments_(std::move(segments)), sections_(std::move(sections)) {}

  std::span<const std::byte> bytes_;
  Elf64_Ehdr header_;
  std::vector<Elf64_Phdr> segments_;
  std::vector<Elf64_Shdr> sections_;
};

}  // namespace nmprof::elf
