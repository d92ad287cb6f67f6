#include "common/mapped_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace nmprof {

std::optional<MappedFile> MappedFile::map(int fd, int* error) {
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    *error = errno;
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
    return std::nullopt;
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) return MappedFile(nullptr, 0, st);
  void* data = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (data == MAP_FAILED) {
    *error = errno;
    return std::nullopt;
  }
  return MappedFile(static_cast<const uint8_t*>(data), size, st);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(other.data_), size_(other.size_), status_(other.status_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile::~MappedFile() {
  if (data_) munmap(const_cast<uint8_t*>(data_), size_);
}

void MappedFile::release_before(size_t offset) const {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t end = std::min(offset, size_) / page * page;
  // A private read-only mapping of a file: dropped pages are the file's, not lost.
  if (end > 0) madvise(const_cast<uint8_t*>(data_), end, MADV_DONTNEED);
}

}  // namespace nmprof
