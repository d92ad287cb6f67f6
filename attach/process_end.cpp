#include "attach/process_end.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "common/signal_text.h"

namespace nmprof::attach {
namespace {

// The fields of /proc/PID/stat from the third (the state) on; the second, the
// command, may hold spaces and parentheses.
std::vector<std::string> stat_fields(pid_t pid) {
  auto text = read_text_at(AT_FDCWD, ("/proc/" + std::to_string(pid) + "/stat").c_str());
  size_t end = text ? text->rfind(") ") : std::string::npos;
  if (end == std::string::npos) return {};
  std::vector<std::string> fields;
  for (size_t at = end + 2; at < text->size();) {
    size_t space = text->find_first_of(" \n", at);
    if (space == std::string::npos) space = text->size();
    fields.push_back(text->substr(at, space - at));
    at = space + 1;
  }
  return fields;
}

std::string field(const std::vector<std::string>& fields, size_t number) {
  return number - 3 < fields.size() ? fields[number - 3] : "";
}

constexpr size_t kState = 3, kStartTime = 22, kExitCode = 52;

}  // namespace

ProcessEnd::ProcessEnd(pid_t pid)
    : pid_(pid), pidfd_(static_cast<int>(syscall(SYS_pidfd_open, pid, 0))),
      start_time_(field(stat_fields(pid), kStartTime)) {}

bool ProcessEnd::ended(std::chrono::milliseconds wait) {
  if (ended_) return true;
  if (pidfd_) {
    pollfd poll_fd{pidfd_.get(), POLLIN, 0};
    int ready = poll(&poll_fd, 1, static_cast<int>(wait.count()));
    if (ready < 0 && errno != EINTR) pidfd_ = UniqueFd();  // /proc alone from now on
    else if (ready <= 0) return false;
  } else {
    usleep(static_cast<useconds_t>(wait.count() * 1000));
  }
  std::vector<std::string> fields = stat_fields(pid_);
  bool same = !fields.empty() && field(fields, kStartTime) == start_time_;
  std::string state = field(fields, kState);
  bool zombie = same && (state == "Z" || state == "X");
  if (same && !zombie && !pidfd_) return false;
  ended_ = true;
  // Shown to whoever may ptrace-read it (0 to others): nmprof, attached to it, may.
  if (zombie) wait_status_ = std::atoi(field(fields, kExitCode).c_str());
  return true;
}

int ProcessEnd::killed_by() const { return wait_status_ && WIFSIGNALED(*wait_status_) ? WTERMSIG(*wait_status_) : 0; }

std::string ProcessEnd::how() const {
  if (killed()) return "was killed by " + signal_text(killed_by());
  if (wait_status_ && WIFEXITED(*wait_status_)) return "exited with status " + std::to_string(WEXITSTATUS(*wait_status_));
  return "has ended";
}

}  // namespace nmprof::attach
