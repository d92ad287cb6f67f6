// Which build of a module a process loaded: its GNU build id, and its file as it was
// when the module was first seen. The file at the module's path may be another build
// by the time its symbols are read (rebuilt, or replaced by a package upgrade during
// a long run); names read from it would then be wrong, so it is checked first.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>

#include "formats/elf/elf_image.h"

namespace nmprof::symbols {

struct ImageIdentity {
  std::string build_id;  // hex, from the loaded image; "" when it has none
  // Its file when first seen (stat); size 0 when it could not be read.
  uint64_t size = 0;
  int64_t modified_ns = 0;  // mtime, nanoseconds since the Unix epoch
  uint64_t device = 0;
  uint64_t inode = 0;

  static ImageIdentity of_file(const struct stat& file, std::string build_id);
  // What tells the file `image` (of which fstat said `file`) apart from this build, or
  // nothing when it is this build: the build id when the loaded image has one, else
  // the file's size, mtime, device and inode. A build known by neither is never matched.
  std::optional<std::string> difference(const elf::ElfImage& image, const struct stat& file) const;
};

}  // namespace nmprof::symbols
