// Finding the separate debug file (objcopy --only-keep-debug) of a stripped ELF
// file, as gdb does: by build-id under <debug_root>/.build-id/, then by
// .gnu_debuglink next to the file, in its .debug/ subdirectory and under
// <debug_root>/<its directory>/. A candidate found by build-id must carry the same
// build-id, one found by debuglink the CRC32 that the link records (which
// reads the whole candidate).
#pragma once

#include <optional>
#include <string>

#include "agent/symbols/elf_file.h"
#include "formats/elf/elf_image.h"

namespace nmprof::symbols {

inline constexpr const char* kSystemDebugRoot = "/usr/lib/debug";

struct DebugFile {
  MappedFile file;
  elf::ElfImage image;  // views file's mapping, which moving a MappedFile keeps in place
};

std::optional<DebugFile> find_debug_file(const elf::ElfImage& stripped, const std::string& path,
                                         const std::string& debug_root);

}  // namespace nmprof::symbols
