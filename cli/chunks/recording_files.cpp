#include "cli/chunks/recording_files.h"

#include <fcntl.h>
#include <sys/stat.h>

namespace nmprof::cli {

std::optional<uint64_t> StagedRecordings::size_of(const std::string& name) const {
  struct stat file;
  if (fstatat(staging_.fd(), name.c_str(), &file, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  return static_cast<uint64_t>(file.st_size);
}

}  // namespace nmprof::cli
