#include "attach/fd_io.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace nmprof::attach {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) close(fd_);
}

int UniqueFd::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool send_all(int socket, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = send(socket, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

ReadStatus read_until_eof(int fd, Clock::time_point deadline, size_t max_bytes, std::string& out) {
  char buffer[8192];
  for (;;) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return ReadStatus::timed_out;
    pollfd p{fd, POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return ReadStatus::failed;
    if (ready == 0) return ReadStatus::timed_out;
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return ReadStatus::failed;
    if (n == 0) return ReadStatus::eof;
    if (out.size() + static_cast<size_t>(n) > max_bytes) return ReadStatus::too_long;
    out.append(buffer, static_cast<size_t>(n));
  }
}

std::optional<std::string> read_text_at(int dir_fd, const char* name, size_t max_bytes) {
  UniqueFd fd(openat(dir_fd, name, O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  std::string text;
  char buffer[4096];
  for (;;) {
    ssize_t n = read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return text;
    if (text.size() + static_cast<size_t>(n) > max_bytes) {
      errno = EFBIG;
      return std::nullopt;
    }
    text.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace nmprof::attach
