#include "agent/symbols/elf_file.h"

#include <fcntl.h>

#include <cerrno>

#include "agent/safety/error_text.h"
#include "agent/safety/own_descriptors.h"

namespace nmprof::symbols {

std::optional<MappedFile> map_elf_file(const std::string& path, std::string* error) {
  // O_NONBLOCK: a FIFO put where a library was would block open() until a writer came.
  own_descriptors::HeldFile file(path.c_str(), O_RDONLY | O_NONBLOCK);
  if (file.fd() < 0) {
    *error = path + ": " + error_text(errno);
    return std::nullopt;
  }
  int map_error = 0;
  std::optional<MappedFile> mapped = MappedFile::map(file.fd(), &map_error);
  if (!mapped && map_error != EISDIR && map_error != EINVAL) {
    *error = path + ": mmap: " + error_text(map_error);
    return std::nullopt;
  }
  if (!mapped || mapped->bytes().empty()) {
    *error = path + ": not a regular, non-empty file";
    return std::nullopt;
  }
  return mapped;
}

}  // namespace nmprof::symbols
