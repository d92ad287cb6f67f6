#include "formats/jfr/reading/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace nmprof::jfr {

MappedFile::MappedFile(const std::string& path) {
  // Non-blocking: a FIFO is refused by map() instead of waiting for a writer forever.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot open " + path);
  try {
    map(fd, path);
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
}

MappedFile::MappedFile(int fd, const std::string& name) { map(fd, name); }

void MappedFile::map(int fd, const std::string& name) {
  auto fail = [&name](int error) { throw std::system_error(error, std::generic_category(), "cannot open " + name); };
  struct stat st {};
  if (fstat(fd, &st) != 0) fail(errno);
  if (!S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) fail(EISDIR);
    // A device or pipe: no errno says so.
    throw std::system_error(EINVAL, std::generic_category(), "cannot open " + name + " (not a regular file)");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) fail(errno);
    data_ = static_cast<const uint8_t*>(p);
  }
}

void MappedFile::release_before(size_t offset) const {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t end = std::min(offset, size_) / page * page;
  // A private read-only mapping of a file: dropped pages are the file's, not lost.
  if (end > 0) madvise(const_cast<uint8_t*>(data_), end, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_) munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace nmprof::jfr
