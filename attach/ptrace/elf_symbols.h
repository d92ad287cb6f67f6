// Facts read from a shared object's ELF file (formats/elf/elf_image.h): where a
// dynamic symbol lies relative to the object's load address, its segments and
// functions (for walking the target's stacks), and whether an executable needs a
// dynamic loader at all. The file is the target's own (its libc may differ from
// nmprof's), opened as mapped_objects.h says.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attach/result.h"

namespace nmprof::attach {

struct ElfSegment {
  uint64_t vaddr = 0;
  uint64_t memory_size = 0;
  uint64_t offset = 0;  // in the file
  uint64_t file_size = 0;
  bool readable = false;
  bool executable = false;
};

struct ElfLayout {
  uint64_t first_load_vaddr = 0;  // p_vaddr of the lowest PT_LOAD, rounded down to its page
  bool has_interpreter = false;   // PT_INTERP: started through ld.so (dynamically linked)
  bool is_shared_object = false;  // ET_DYN
  std::vector<ElfSegment> loads;  // PT_LOAD, as in the file
  ElfSegment eh_frame_hdr;        // PT_GNU_EH_FRAME; memory_size 0 without one
};

Result<ElfLayout> read_elf_layout(int fd);

// The value (offset from the load address of the first PT_LOAD) of the defined
// function `name` in .dynsym. With several versions, the default one (name@@V).
Result<uint64_t> find_dynamic_function(int fd, std::string_view name);

struct ElfFunction {
  uint64_t value = 0;  // as find_dynamic_function's
  uint64_t size = 0;
  std::string name;
  bool exported = false;  // in .dynsym (otherwise only in .symtab)
};

// Every defined function with a size in .dynsym and .symtab, sorted by value.
Result<std::vector<ElfFunction>> read_functions(int fd);

}  // namespace nmprof::attach
