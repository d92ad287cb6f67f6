// Whether a process nmprof attached to (and is not the parent of) has ended, and how.
// A pidfd says that it has, whatever its pid is given to next; how is known only
// while it is a zombie, until its parent reaps it: /proc/PID/stat then holds its wait
// status (field 52). A target killed by SIGKILL (the OOM killer, kill -9) wrote its
// recording last at its agent's last write: the message says so.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

#include "attach/fd_io.h"

namespace nmprof::attach {

class ProcessEnd {
 public:
  explicit ProcessEnd(pid_t pid);

  // Whether the process has ended, waiting up to `wait` for it (less when a signal
  // comes); how, is read as soon as it is seen to, for the best chance to find the
  // zombie before its parent reaps it.
  bool ended(std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  // "was killed by signal 9 (SIGKILL)", "exited with status 3", or "has ended" (its
  // parent reaped it before nmprof looked).
  std::string how() const;
  // Whether a signal is known to have killed it.
  bool killed() const { return killed_by() != 0; }
  // The signal known to have killed it, or 0.
  int killed_by() const;

 private:
  pid_t pid_;
  UniqueFd pidfd_;          // none before Linux 5.3: /proc/PID/stat alone then
  std::string start_time_;  // field 22 of its stat: another process under its pid has another
  bool ended_ = false;
  std::optional<int> wait_status_;  // as waitpid(2) gives it, when read from the zombie
};

}  // namespace nmprof::attach
