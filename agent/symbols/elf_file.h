// A library's or debug file's ELF file, mapped (common/mapped_file.h) through the
// agent's own descriptors.
#pragma once

#include <optional>
#include <string>

#include "common/mapped_file.h"

namespace nmprof::symbols {

// Nothing, and `*error` ("PATH: reason"), unless `path` is a regular, non-empty file
// that could be mapped.
std::optional<MappedFile> map_elf_file(const std::string& path, std::string* error);

}  // namespace nmprof::symbols
