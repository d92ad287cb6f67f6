// Facts read from a shared object's ELF file with libelf: where a dynamic symbol
// lies relative to the object's load address, and whether an executable needs a
// dynamic loader at all. The file is the target's own (its libc may differ from
// nmprof's), opened through /proc/<pid>/root.
#pragma once

#include <cstdint>
#include <string_view>

#include "attach/result.h"

namespace nmprof::attach {

struct ElfLayout {
  uint64_t first_load_vaddr = 0;  // p_vaddr of the lowest PT_LOAD, rounded down to its page
  bool has_interpreter = false;   // PT_INTERP: started through ld.so (dynamically linked)
  bool is_shared_object = false;  // ET_DYN
};

Result<ElfLayout> read_elf_layout(int fd);

// The value (offset from the load address of the first PT_LOAD) of the defined
// function `name` in .dynsym. With several versions, the default one (name@@V).
Result<uint64_t> find_dynamic_function(int fd, std::string_view name);

}  // namespace nmprof::attach
