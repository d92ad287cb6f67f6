#include "cli/output_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "cli/invoking_user.h"
#include "common/safe_file.h"

namespace nmprof::cli {
namespace {

// Closes its descriptors; removes the staging file unless it was renamed.
struct Staging {
  int dir = -1;
  int fd = -1;
  char name[64] = "";
  ~Staging() {
    if (fd >= 0) close(fd);
    if (name[0]) {
      AsInvokingUser as_user;
      unlinkat(dir, name, 0);
    }
    if (dir >= 0) close(dir);
  }
};

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

bool write_output(const std::string& output, std::string* error, const OutputFiller& fill) {
  Staging staging;
  const char* name = nullptr;
  {
    AsInvokingUser as_user;
    staging.dir = safe_file::open_parent(output.c_str(), &name);
    if (staging.dir < 0) {
      *error = "cannot write " + output + ": " + safe_file::error_text(staging.dir);
      return false;
    }
    // Mode as for any file the user creates (umask applies); it replaces the output.
    staging.fd = safe_file::create_unique(staging.dir, ".nmprof-", ".partial", O_WRONLY, 0666, staging.name,
                                          sizeof staging.name);
    if (staging.fd < 0) {
      staging.name[0] = '\0';
      *error = "cannot create a file next to " + output + ": " + safe_file::error_text(staging.fd);
      return false;
    }
  }
  if (!fill(staging.fd, error)) return false;
  if (fsync(staging.fd) != 0 || close(std::exchange(staging.fd, -1)) != 0) {
    *error = "cannot write " + output + ": " + strerror(errno);
    return false;
  }
  AsInvokingUser as_user;
  if (renameat(staging.dir, staging.name, staging.dir, name) != 0) {
    *error = "cannot write " + output + ": " + strerror(errno);
    return false;
  }
  staging.name[0] = '\0';
  return true;
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
