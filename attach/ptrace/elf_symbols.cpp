#include "attach/ptrace/elf_symbols.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

#include "common/mapped_file.h"
#include "formats/elf/elf_image.h"

namespace nmprof::attach {
namespace {

// Versym entries: bit 15 marks a hidden (non-default) version, name@V rather than name@@V.
constexpr uint16_t kHiddenVersion = 0x8000;

// A file mapped whole, and the ELF image that views the mapping.
struct MappedElf {
  MappedFile file;
  elf::ElfImage image;
};

Result<MappedElf> map_elf(int fd) {
  int map_error = 0;
  std::optional<MappedFile> file = MappedFile::map(fd, &map_error);
  if (!file && map_error != EISDIR && map_error != EINVAL) return Error{std::string("mmap: ") + strerror(map_error)};
  if (!file) return Error{"not an ELF file"};
  std::string error;
  // Program headers are what the attach needs first; a file may lack section headers.
  auto image = elf::ElfImage::parse(std::as_bytes(file->bytes()), &error, elf::ElfImage::Sections::Optional);
  if (!image) return Error{error};
  return MappedElf{std::move(*file), *image};
}

// Symbol `index` of a table, or nothing past its end.
std::optional<Elf64_Sym> symbol_at(const elf::SymbolSection& table, size_t index) {
  return elf::read_at<Elf64_Sym>(table.symbols, index * sizeof(Elf64_Sym));
}

}  // namespace

Result<ElfLayout> read_elf_layout(int fd) {
  auto elf = map_elf(fd);
  if (!elf) return elf.error();
  ElfLayout layout;
  layout.is_shared_object = elf->image.header().e_type == ET_DYN;
  bool found_load = false;
  for (const Elf64_Phdr& ph : elf->image.segments()) {
    if (ph.p_type == PT_INTERP) layout.has_interpreter = true;
    ElfSegment segment{ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz, (ph.p_flags & PF_R) != 0,
                       (ph.p_flags & PF_X) != 0};
    if (ph.p_type == PT_GNU_EH_FRAME) layout.eh_frame_hdr = segment;
    if (ph.p_type != PT_LOAD) continue;
    layout.loads.push_back(segment);
    uint64_t page = ph.p_vaddr & ~(ph.p_align > 1 ? ph.p_align - 1 : 0xfff);
    if (!found_load || page < layout.first_load_vaddr) layout.first_load_vaddr = page;
    found_load = true;
  }
  if (!found_load) return Error{"no loadable segment"};
  return layout;
}

Result<uint64_t> find_dynamic_function(int fd, std::string_view name) {
  auto elf = map_elf(fd);
  if (!elf) return elf.error();
  std::optional<elf::SymbolSection> dynsym = elf->image.symbol_section(SHT_DYNSYM);
  if (!dynsym) return Error{"no dynamic symbol table"};
  std::optional<uint64_t> hidden_match;
  for (size_t i = 0; auto sym = symbol_at(*dynsym, i); i++) {
    if (sym->st_shndx == SHN_UNDEF || sym->st_value == 0) continue;
    // An IFUNC's address is its resolver's, which a remote call cannot use.
    if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC) continue;
    if (elf::string_at(dynsym->strings, sym->st_name) != name) continue;
    auto version = elf::read_at<uint16_t>(dynsym->versions, i * sizeof(uint16_t));
    if (version && (*version & kHiddenVersion)) {
      hidden_match = sym->st_value;
      continue;
    }
    return sym->st_value;
  }
  if (hidden_match) return *hidden_match;
  return Error{"no function " + std::string(name) + " in the dynamic symbol table"};
}

Result<std::vector<ElfFunction>> read_functions(int fd) {
  auto elf = map_elf(fd);
  if (!elf) return elf.error();
  std::vector<ElfFunction> functions;
  for (uint32_t type : {SHT_DYNSYM, SHT_SYMTAB}) {
    std::optional<elf::SymbolSection> table = elf->image.symbol_section(type);
    if (!table) continue;
    for (size_t i = 0; auto sym = symbol_at(*table, i); i++) {
      if (sym->st_shndx == SHN_UNDEF || sym->st_size == 0) continue;
      if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC && ELF64_ST_TYPE(sym->st_info) != STT_GNU_IFUNC) continue;
      std::string_view name = elf::string_at(table->strings, sym->st_name);
      if (!name.empty()) functions.push_back({sym->st_value, sym->st_size, std::string(name), type == SHT_DYNSYM});
    }
  }
  std::sort(functions.begin(), functions.end(),
            [](const ElfFunction& a, const ElfFunction& b) { return a.value < b.value; });
  return functions;
}

}  // namespace nmprof::attach
