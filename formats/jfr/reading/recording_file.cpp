#include "formats/jfr/reading/recording_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace nmprof::jfr {
namespace {

[[noreturn]] void fail(int error, const std::string& name) {
  // A device or pipe: no errno says so.
  if (error == EINVAL)
    throw std::system_error(EINVAL, std::generic_category(), "cannot open " + name + " (not a regular file)");
  throw std::system_error(error, std::generic_category(), "cannot open " + name);
}

}  // namespace

MappedFile map_recording(const std::string& path) {
  // Non-blocking: a FIFO is refused by map() instead of waiting for a writer forever.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(errno, path);
  int error = 0;
  std::optional<MappedFile> file = MappedFile::map(fd, &error);
  close(fd);
  if (!file) fail(error, path);
  return std::move(*file);
}

MappedFile map_recording(int fd, const std::string& name) {
  int error = 0;
  std::optional<MappedFile> file = MappedFile::map(fd, &error);
  if (!file) fail(error, name);
  return std::move(*file);
}

}  // namespace nmprof::jfr
