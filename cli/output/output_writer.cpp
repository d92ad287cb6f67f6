#include "cli/output/output_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "cli/output/fd_output_stream.h"
#include "cli/output/invoking_user.h"
#include "cli/signals.h"
#include "common/safe_file.h"

namespace nmprof::cli {
namespace {

bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

const char* refusal_to_replace(int dir, const char* name) {
  struct stat st {};
  if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISREG(st.st_mode)) return nullptr;
  if (S_ISDIR(st.st_mode)) return "is a directory; give a file name";
  if (S_ISLNK(st.st_mode))
    return "is a symbolic link; nmprof neither follows nor replaces links (name the file itself; -o - is standard "
           "output for report)";
  return "exists and is not a regular file (a FIFO, socket or device); nmprof replaces only regular files (-o - is "
         "standard output for report)";
}

OutputFile::OutputFile(std::string output) : output_(std::move(output)) {}

OutputFile::~OutputFile() {
  stream_.reset();
  if (fd_ >= 0) close(fd_);
  if (staging_[0]) {
    AsInvokingUser as_user;
    unlinkat(dir_, staging_, 0);
  }
  removed_if_interrupted_.reset();
  if (dir_ >= 0) close(dir_);
}

bool OutputFile::open(std::string* error) {
  AsInvokingUser as_user;
  dir_ = safe_file::open_parent(output_.c_str(), &name_);
  if (dir_ < 0) {
    *error = "cannot write " + output_ + ": " +
             (dir_ == -EISDIR ? "it names a directory; give a file name" : safe_file::error_text(dir_));
    return false;
  }
  if (const char* why = refusal_to_replace(dir_, name_)) {
    *error = "-o " + output_ + " " + why;
    return false;
  }
  // Registered before a signal can end nmprof: one between the two left the file.
  StoppingSignalsHeld held;
  fd_ = safe_file::create_unique(dir_, ".nmprof-", ".partial", O_WRONLY, 0600, staging_, sizeof staging_);
  if (fd_ < 0) {
    staging_[0] = '\0';
    *error = "cannot create a file next to " + output_ + ": " + safe_file::error_text(fd_);
    return false;
  }
  removed_if_interrupted_.emplace(dir_, staging_);
  return true;
}

std::ostream& OutputFile::stream() {
  if (!stream_) stream_ = std::make_unique<FdOutputStream>(fd_);
  return *stream_;
}

bool OutputFile::commit(std::string* error) {
  auto fail = [&](int code) {
    *error = "cannot write " + output_ + ": " + strerror(code);
    return false;
  };
  if (stream_) {
    auto& stream = static_cast<FdOutputStream&>(*stream_);
    stream.flush();
    if (stream.error() || !stream) return fail(stream.error() ? stream.error() : EIO);
  }
  if (fsync(fd_) != 0) return fail(errno);
  if (close(std::exchange(fd_, -1)) != 0) return fail(errno);
  AsInvokingUser as_user;
  // Looked at again: a link or FIFO put there meanwhile is not replaced either.
  if (const char* why = refusal_to_replace(dir_, name_)) {
    *error = "-o " + output_ + " " + why;
    return false;
  }
  if (renameat(dir_, staging_, dir_, name_) != 0) return fail(errno);
  removed_if_interrupted_.reset();
  staging_[0] = '\0';
  return true;
}

bool write_output(const std::string& output, std::string* error, const OutputFiller& fill) {
  OutputFile file(output);
  return file.open(error) && fill(file.fd(), error) && file.commit(error);
}

bool write_bytes(int fd, std::span<const uint8_t> bytes, const std::string& output, std::string* error) {
  if (write_all(fd, reinterpret_cast<const char*>(bytes.data()), bytes.size())) return true;
  *error = "cannot write " + output + ": " + strerror(errno);
  return false;
}

bool copy_file(int source, size_t length, int out, std::string* error) {
  char buffer[65536];
  for (size_t at = 0; at < length;) {
    ssize_t n = pread(source, buffer, std::min(sizeof buffer, length - at), static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = std::string("cannot read the recording: ") + (n < 0 ? strerror(errno) : "it was cut short");
      return false;
    }
    if (!write_all(out, buffer, static_cast<size_t>(n))) {
      *error = std::string("cannot write the output: ") + strerror(errno);
      return false;
    }
    at += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace nmprof::cli
