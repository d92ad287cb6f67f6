#include "cli/report/output_file.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <system_error>

namespace nmprof::report {
namespace {

[[noreturn]] void fail(const std::string& path, int error) {
  throw std::system_error(error, std::generic_category(), "cannot write " + path);
}

}  // namespace

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::file_status status = fs::status(path_, ec);  // through symbolic links
  if (fs::is_directory(status)) fail(path_, EISDIR);
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    // A device, pipe or terminal (/dev/stdout): written in place, never replaced.
    stream_.open(path_, std::ios::binary);
    if (!stream_) fail(path_, errno ? errno : EIO);
    return;
  }
  // Beside the file a symbolic link points to, so that the link stays.
  fs::path target = path_;
  if (fs::exists(status)) {
    target = fs::canonical(path_, ec);
    if (ec) fail(path_, ec.value());
  }
  target_ = target.string();
  temporary_ = (target.has_parent_path() ? target.parent_path() / ".nmprof-out-XXXXXX" : fs::path(".nmprof-out-XXXXXX"))
                   .string();
  int fd = mkstemp(temporary_.data());
  if (fd < 0) {
    int error = errno;
    temporary_.clear();
    fail(path_, error);
  }
  fchmod(fd, 0644);  // mkstemp's 0600 would hide the output from other users
  close(fd);
  stream_.open(temporary_, std::ios::binary | std::ios::trunc);
  if (!stream_) fail(path_, EIO);
}

OutputFile::~OutputFile() {
  if (!committed_ && !temporary_.empty()) unlink(temporary_.c_str());
}

void OutputFile::commit() {
  stream_.flush();
  if (!stream_) fail(path_, ENOSPC);  // the usual reason a buffered write fails
  stream_.close();
  if (stream_.fail()) fail(path_, ENOSPC);
  if (!temporary_.empty() && rename(temporary_.c_str(), target_.c_str()) != 0) fail(path_, errno);
  committed_ = true;
}

}  // namespace nmprof::report
