// A whole file mapped read-only, unmapped when destroyed: multi-gigabyte recordings
// and libraries' symbol tables are read without copying. libc only and no
// exceptions (the agent's symbol reader uses it); how a file is opened is the
// caller's (symbols/elf_file.h, jfr/reading/recording_file.h).
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace nmprof {

class MappedFile {
 public:
  // Maps the file open as `fd` (not taken: the caller closes it); an empty file maps
  // to no bytes. Nothing when it cannot, with `*error` the reason: an errno, EISDIR
  // for a directory, EINVAL for anything else that is not a regular file.
  static std::optional<MappedFile> map(int fd, int* error);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&&) = delete;
  MappedFile(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  // What fstat said of the file that was mapped.
  const struct stat& status() const { return status_; }
  // Drops the pages before `offset` from memory: they stay readable (read again from
  // the file when touched), but a pass over a huge file no longer keeps it all resident.
  void release_before(size_t offset) const;

 private:
  MappedFile(const uint8_t* data, size_t size, const struct stat& status) : data_(data), size_(size), status_(status) {}

  const uint8_t* data_;
  size_t size_;
  struct stat status_;
};

}  // namespace nmprof
