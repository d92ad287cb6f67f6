// A whole file mapped read-only, unmapped when destroyed.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace nmprof::symbols {

class MappedFile {
 public:
  static std::optional<MappedFile> open(const std::string& path, std::string* error);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&&) = delete;
  MappedFile(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  // What fstat said of the file that was mapped.
  const struct stat& status() const { return status_; }

 private:
  MappedFile(const std::byte* data, size_t size, const struct stat& status)
      : data_(data), size_(size), status_(status) {}

  const std::byte* data_;
  size_t size_;
  struct stat status_;
};

}  // namespace nmprof::symbols
