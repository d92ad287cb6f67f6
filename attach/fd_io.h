// File descriptor ownership and the few blocking I/O loops the attach code needs.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace nmprof::attach {

using Clock = std::chrono::steady_clock;

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release();

 private:
  int fd_ = -1;
};

// Writes all of `data`; false with errno set on failure.
bool write_all(int fd, std::string_view data);
// The same for a socket, without raising SIGPIPE when the peer has gone away (so
// nmprof does not have to change the process-wide SIGPIPE disposition).
bool send_all(int socket, std::string_view data);

enum class ReadStatus { eof, timed_out, too_long, failed };
// Appends everything readable from `fd` to `out` until EOF, waiting with poll() no
// later than `deadline`, and taking no more than `max_bytes` (what a target sends
// is bounded in size and time). On `failed`, errno tells why.
ReadStatus read_until_eof(int fd, Clock::time_point deadline, size_t max_bytes, std::string& out);

// Reads a procfs file relative to a directory fd, at most `max_bytes` of it;
// nullopt with errno set (EFBIG when it is longer).
std::optional<std::string> read_text_at(int dir_fd, const char* name, size_t max_bytes = 64 << 20);

}  // namespace nmprof::attach
