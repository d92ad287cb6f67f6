// A whole file mapped read-only, so multi-gigabyte recordings are read without copying.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace nmprof::jfr {

class MappedFile {
 public:
  // Throws std::system_error ("cannot open PATH: reason") when the file cannot be read.
  explicit MappedFile(const std::string& path);
  // The file open as `fd` (not taken: the caller closes it); `name` for messages.
  MappedFile(int fd, const std::string& name);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  // Drops the pages before `offset` from memory: they stay readable (read again from
  // the file when touched), but a pass over a huge file no longer keeps it all resident.
  void release_before(size_t offset) const;

 private:
  void map(int fd, const std::string& name);

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace nmprof::jfr
