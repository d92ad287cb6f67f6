#include "agent/symbols/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/safety/error_text.h"
#include "agent/safety/own_descriptors.h"

namespace nmprof::symbols {

std::optional<MappedFile> MappedFile::open(const std::string& path, std::string* error) {
  // O_NONBLOCK: a FIFO put where a library was would block open() until a writer came.
  own_descriptors::HeldFile file(path.c_str(), O_RDONLY | O_NONBLOCK);
  if (file.fd() < 0) {
    *error = path + ": " + error_text(errno);
    return std::nullopt;
  }
  struct stat st;
  if (fstat(file.fd(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    *error = path + ": not a regular, non-empty file";
    return std::nullopt;
  }
  size_t size = static_cast<size_t>(st.st_size);
  void* data = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd(), 0);
  int mmap_errno = errno;
  if (data == MAP_FAILED) {
    *error = path + ": mmap: " + error_text(mmap_errno);
    return std::nullopt;
  }
  return MappedFile(static_cast<const std::byte*>(data), size, st);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(other.data_), size_(other.size_), status_(other.status_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace nmprof::symbols
