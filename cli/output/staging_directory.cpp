#include "cli/output/staging_directory.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/safe_file.h"

namespace nmprof::cli {
namespace {

// Whether users other than us and root may rename entries of `directory` (by owning
// it, or by writing it when it is not sticky).
bool others_may_rename_in(const std::filesystem::path& directory) {
  struct stat st {};
  if (stat(directory.c_str(), &st) != 0) return true;
  bool owned = st.st_uid == geteuid() || st.st_uid == 0;
  bool shared = (st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX);
  return !owned || shared;
}

}  // namespace

std::string staging_parent(const std::string& directory) {
  std::error_code error;
  std::filesystem::path path = std::filesystem::canonical(directory, error);
  if (error) return "/tmp";
  for (auto at = path;; at = at.parent_path()) {
    if (others_may_rename_in(at)) return "/tmp";
    if (at == at.root_path()) return path;
  }
}

StagingDirectory::~StagingDirectory() {
  if (fd_ >= 0) close(fd_);
  if (parent_ >= 0) close(parent_);
}

bool StagingDirectory::create(const std::string& parent, std::string* error) {
  std::string path = parent + "/.nmprof-XXXXXX";
  if (!mkdtemp(path.data())) {
    *error = "cannot create a directory in " + parent + ": " + strerror(errno);
    return false;
  }
  path_ = path;
  parent_ = open(parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  fd_ = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st {};
  // Renamed and replaced before it was opened: refused, and what is there is not ours to delete.
  if (parent_ < 0 || fd_ < 0 || fstat(fd_, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    *error = "the directory " + path + " was replaced as soon as it was made (by whoever may write " + parent +
             "); not using it";
    return false;
  }
  return true;
}

std::vector<std::string> StagingDirectory::names(const std::string& suffix) const {
  std::vector<std::string> found;
  int listing = openat(fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);  // fdopendir takes its descriptor
  DIR* dir = listing >= 0 ? fdopendir(listing) : nullptr;
  if (!dir) {
    if (listing >= 0) close(listing);
    return found;
  }
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != ".." && name.ends_with(suffix)) found.push_back(name);
  }
  closedir(dir);
  return found;
}

int StagingDirectory::open_file(const std::string& name, int access) const {
  int fd = openat(fd_, name.c_str(), access | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -errno;
  if (int bad = safe_file::check_owned_regular(fd, geteuid())) {
    close(fd);
    return bad;
  }
  return fd;
}

bool StagingDirectory::remove_file(const std::string& name) const {
  return unlinkat(fd_, name.c_str(), 0) == 0 || errno == ENOENT;
}

void StagingDirectory::remove() {
  for (const std::string& name : names("")) unlinkat(fd_, name.c_str(), 0);
  // By its name, as a last step: if someone swapped in another directory, only an
  // empty one can go.
  const char* base = strrchr(path_.c_str(), '/') + 1;
  unlinkat(parent_, base, AT_REMOVEDIR);
}

}  // namespace nmprof::cli
