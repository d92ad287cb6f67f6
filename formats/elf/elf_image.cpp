#include "formats/elf/elf_image.h"

namespace nmprof::elf {

namespace {

// Rounds note name and descriptor sizes up to the 4-byte alignment of ELF notes.
uint64_t align4(uint64_t n) { return (n + 3) & ~uint64_t{3}; }

bool fits(uint64_t offset, uint64_t size, uint64_t limit) { return offset <= limit && size <= limit - offset; }

}  // namespace

std::string_view string_at(std::span<const std::byte> table, uint64_t offset) {
  if (offset >= table.size()) return {};
  const char* start = reinterpret_cast<const char*>(table.data()) + offset;
  size_t length = strnlen(start, table.size() - offset);
  if (length == table.size() - offset) return {};
  return {start, length};
}

std::optional<ElfImage> ElfImage::parse(std::span<const std::byte> bytes, std::string* error, Sections sections) {
  auto header = read_at<Elf64_Ehdr>(bytes, 0);
  if (!header || std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0) {
    *error = "not an ELF file";
    return std::nullopt;
  }
  if (header->e_ident[EI_CLASS] != ELFCLASS64 || header->e_ident[EI_DATA] != ELFDATA2LSB) {
    *error = "not a little-endian ELF64 file";
    return std::nullopt;
  }
  std::vector<Elf64_Phdr> segments;
  if (header->e_phnum != 0 && header->e_phentsize == sizeof(Elf64_Phdr) &&
      fits(header->e_phoff, uint64_t{header->e_phnum} * sizeof(Elf64_Phdr), bytes.size())) {
    segments.resize(header->e_phnum);
    std::memcpy(segments.data(), bytes.data() + header->e_phoff, segments.size() * sizeof(Elf64_Phdr));
  }
  bool no_sections = header->e_shoff == 0 || header->e_shnum == 0;
  if (no_sections && sections == Sections::Optional) return ElfImage(bytes, *header, std::move(segments), {});
  if (no_sections) {
    *error = "no section header table";
    return std::nullopt;
  }
  if (header->e_shentsize != sizeof(Elf64_Shdr) ||
      !fits(header->e_shoff, uint64_t{header->e_shnum} * sizeof(Elf64_Shdr), bytes.size())) {
    *error = "section header table out of bounds (truncated file?)";
    return std::nullopt;
  }
  std::vector<Elf64_Shdr> section_headers(header->e_shnum);
  std::memcpy(section_headers.data(), bytes.data() + header->e_shoff, section_headers.size() * sizeof(Elf64_Shdr));
  for (const Elf64_Shdr& section : section_headers) {
    if (section.sh_type != SHT_NOBITS && !fits(section.sh_offset, section.sh_size, bytes.size())) {
      *error = "section out of bounds (truncated file?)";
      return std::nullopt;
    }
  }
  return ElfImage(bytes, *header, std::move(segments), std::move(section_headers));
}

const Elf64_Shdr* ElfImage::section(size_t index) const {
  return index > 0 && index < sections_.size() ? &sections_[index] : nullptr;
}

const Elf64_Shdr* ElfImage::find_section(uint32_t type) const {
  for (const Elf64_Shdr& section : sections_) {
    if (section.sh_type == type) return &section;
  }
  return nullptr;
}

const Elf64_Shdr* ElfImage::find_section(std::string_view name) const {
  const Elf64_Shdr* names = section(header_.e_shstrndx);
  if (names == nullptr) return nullptr;
  for (const Elf64_Shdr& section : sections_) {
    if (string_at(contents(*names), section.sh_name) == name) return &section;
  }
  return nullptr;
}

std::span<const std::byte> ElfImage::contents(const Elf64_Shdr& section) const {
  if (section.sh_type == SHT_NOBITS) return {};
  return bytes_.subspan(section.sh_offset, section.sh_size);  // bounds checked by parse()
}

std::optional<SymbolSection> ElfImage::symbol_section(uint32_t type) const {
  const Elf64_Shdr* symbols = find_section(type);
  if (symbols == nullptr || symbols->sh_entsize != sizeof(Elf64_Sym)) return std::nullopt;
  const Elf64_Shdr* strings = section(symbols->sh_link);
  if (strings == nullptr || strings->sh_type != SHT_STRTAB) return std::nullopt;
  // .dynsym names carry no version; .gnu.version, parallel to it, marks non-default ones hidden.
  std::span<const std::byte> versions;
  const Elf64_Shdr* versym = find_section(SHT_GNU_versym);
  if (type == SHT_DYNSYM && versym != nullptr && section(versym->sh_link) == symbols) versions = contents(*versym);
  return SymbolSection{contents(*symbols), contents(*strings), versions};
}

std::string hex_text(std::span<const std::byte> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  for (std::byte b : bytes) {
    text += kDigits[static_cast<uint8_t>(b) >> 4];
    text += kDigits[static_cast<uint8_t>(b) & 0xF];
  }
  return text;
}

std::span<const std::byte> find_note(std::span<const std::byte> notes, uint64_t alignment, std::string_view name,
                                     uint32_t type) {
  auto align = [alignment](uint64_t n) { return (n + alignment - 1) & ~(alignment - 1); };
  uint64_t offset = 0;
  while (auto note = read_at<Elf64_Nhdr>(notes, offset)) {
    uint64_t name_offset = offset + sizeof(Elf64_Nhdr);
    uint64_t desc_offset = name_offset + align(note->n_namesz);
    if (!fits(desc_offset, note->n_descsz, notes.size())) break;
    // NUL-terminated within n_namesz, which may pad it further (Go's is "Go\0\0").
    std::string_view note_name(reinterpret_cast<const char*>(notes.data()) + name_offset, note->n_namesz);
    size_t end = note_name.find('\0');
    if (note->n_type == type && end != std::string_view::npos && note_name.substr(0, end) == name)
      return notes.subspan(desc_offset, note->n_descsz);
    offset = desc_offset + align(note->n_descsz);
  }
  return {};
}

std::span<const std::byte> find_build_id(std::span<const std::byte> notes, uint64_t alignment) {
  return find_note(notes, alignment, "GNU", NT_GNU_BUILD_ID);
}

std::span<const std::byte> ElfImage::build_id() const {
  for (const Elf64_Shdr& section : sections_) {
    if (section.sh_type != SHT_NOTE) continue;
    auto id = find_build_id(contents(section), section.sh_addralign == 8 ? 8 : 4);
    if (!id.empty()) return id;
  }
  return {};
}

std::optional<DebugLink> ElfImage::debug_link() const {
  // .gnu_debuglink: the file name, NUL, padding to 4 bytes, then a CRC32 of the debug file.
  const Elf64_Shdr* section = find_section(".gnu_debuglink");
  if (section == nullptr) return std::nullopt;
  std::span<const std::byte> data = contents(*section);
  std::string_view name = string_at(data, 0);
  auto crc = read_at<uint32_t>(data, align4(name.size() + 1));
  if (name.empty() || !crc) return std::nullopt;
  return DebugLink{name, *crc};
}

}  // namespace nmprof::elf
