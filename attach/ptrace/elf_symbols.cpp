#include "attach/ptrace/elf_symbols.h"

#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>

namespace nmprof::attach {
namespace {

struct ElfCloser {
  void operator()(Elf* elf) const { elf_end(elf); }
};
using ElfHandle = std::unique_ptr<Elf, ElfCloser>;

Result<ElfHandle> open_elf(int fd) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Error{std::string("libelf: ") + elf_errmsg(-1)};
  ElfHandle elf(elf_begin(fd, ELF_C_READ_MMAP, nullptr));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) return Error{"not an ELF file"};
  if (gelf_getclass(elf.get()) != ELFCLASS64) return Error{"not a 64-bit ELF file"};
  return elf;
}

// Versym entries: bit 15 marks a hidden (non-default) version, name@V rather than name@@V.
constexpr uint16_t kHiddenVersion = 0x8000;

struct SymbolTable {
  Elf_Data* symbols = nullptr;
  size_t count = 0;
  size_t names = 0;                // the string table's section index
  Elf_Data* versions = nullptr;    // .gnu.version, for .dynsym
};

// The symbol table of `type` (SHT_DYNSYM or SHT_SYMTAB); no symbols when there is none.
SymbolTable find_table(Elf* elf, Elf64_Word type) {
  SymbolTable table;
  Elf_Scn* versym = nullptr;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    if (sh.sh_type == type && sh.sh_entsize != 0) {
      table.symbols = elf_getdata(scn, nullptr);
      table.count = sh.sh_size / sh.sh_entsize;
      table.names = sh.sh_link;
    } else if (sh.sh_type == SHT_GNU_versym) {
      versym = scn;
    }
  }
  if (type == SHT_DYNSYM && versym) table.versions = elf_getdata(versym, nullptr);
  return table;
}

}  // namespace

Result<ElfLayout> read_elf_layout(int fd) {
  auto elf = open_elf(fd);
  if (!elf) return elf.error();
  GElf_Ehdr header;
  size_t count = 0;
  if (!gelf_getehdr(elf->get(), &header) || elf_getphdrnum(elf->get(), &count) != 0)
    return Error{"no ELF program headers"};
  ElfLayout layout;
  layout.is_shared_object = header.e_type == ET_DYN;
  bool found_load = false;
  for (size_t i = 0; i < count; i++) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf->get(), static_cast<int>(i), &ph)) continue;
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
  auto elf = open_elf(fd);
  if (!elf) return elf.error();
  SymbolTable dynsym = find_table(elf->get(), SHT_DYNSYM);
  if (!dynsym.symbols) return Error{"no dynamic symbol table"};
  Elf_Data* versions = dynsym.versions;
  std::optional<uint64_t> hidden_match;
  for (size_t i = 0; i < dynsym.count; i++) {
    GElf_Sym sym;
    if (!gelf_getsym(dynsym.symbols, static_cast<int>(i), &sym)) continue;
    if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
    // An IFUNC's address is its resolver's, which a remote call cannot use.
    if (GELF_ST_TYPE(sym.st_info) != STT_FUNC) continue;
    const char* symbol_name = elf_strptr(elf->get(), dynsym.names, sym.st_name);
    if (!symbol_name || name != symbol_name) continue;
    GElf_Versym version = 0;
    if (versions && gelf_getversym(versions, static_cast<int>(i), &version) && (version & kHiddenVersion)) {
      hidden_match = sym.st_value;
      continue;
    }
    return sym.st_value;
  }
  if (hidden_match) return *hidden_match;
  return Error{"no function " + std::string(name) + " in the dynamic symbol table"};
}

Result<std::vector<ElfFunction>> read_functions(int fd) {
  auto elf = open_elf(fd);
  if (!elf) return elf.error();
  std::vector<ElfFunction> functions;
  for (auto type : {SHT_DYNSYM, SHT_SYMTAB}) {
    SymbolTable table = find_table(elf->get(), type);
    for (size_t i = 0; table.symbols && i < table.count; i++) {
      GElf_Sym sym;
      if (!gelf_getsym(table.symbols, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF || sym.st_size == 0)
        continue;
      if (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC) continue;
      const char* name = elf_strptr(elf->get(), table.names, sym.st_name);
      if (name && *name) functions.push_back({sym.st_value, sym.st_size, name, type == SHT_DYNSYM});
    }
  }
  std::sort(functions.begin(), functions.end(),
            [](const ElfFunction& a, const ElfFunction& b) { return a.value < b.value; });
  return functions;
}

}  // namespace nmprof::attach
