#include "attach/as_target.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>
#include <string>

#include "attach/timeouts.h"
#include "common/descriptor_passing.h"

namespace nmprof::attach {
namespace {

// One message from the helper: 'F' with a descriptor, 'N' (done, no descriptor) or
// 'E' followed by the error message.
constexpr size_t kMaxMessage = 4096;

std::string target_label(const TargetProcess& target) {
  return "process " + std::to_string(target.pid);
}

Result<void> take_credentials(const TargetProcess& target) {
  const ProcessStatus& s = target.status;
  if (setgroups(s.groups.size(), s.groups.data()) != 0 || setresgid(s.egid, s.egid, s.egid) != 0 ||
      setresuid(s.euid, s.euid, s.euid) != 0) {
    return Error{"cannot switch to the credentials of " + target_label(target) + " (uid " +
                 std::to_string(s.euid) + ", gid " + std::to_string(s.egid) + "): " + std::strerror(errno)};
  }
  return {};
}

// Root in a container (no user namespace) would otherwise keep every capability of
// the host's root: clear them all, and forbid gaining any through exec.
Result<void> drop_capabilities() {
  for (int cap = 0; cap <= 63; cap++) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);  // beyond the last: EINVAL
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capset, &header, none) != 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return Error{std::string("the attach helper cannot drop its capabilities: ") + std::strerror(errno)};
  return {};
}

Result<UniqueFd> become_target_and_run(const TargetProcess& target, const TargetJob& job) {
  std::string proc_path = "/proc/" + std::to_string(target.pid);
  UniqueFd proc(open(proc_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!proc) return Error{target_label(target) + " has exited"};
  UniqueFd root(openat(proc.get(), "root", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root) {
    if (errno == ENOENT || errno == ESRCH) return Error{target_label(target) + " has exited"};
    return Error{"cannot open " + proc_path + "/root: " + std::strerror(errno) +
                 "; ptrace access to the process is restricted: run nmprof as root or as its user"};
  }
  UniqueFd cwd(openat(proc.get(), "cwd", O_PATH | O_DIRECTORY | O_CLOEXEC));
  UniqueFd self_fds(open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC));

  if (geteuid() == 0) {
    if (fchdir(root.get()) != 0 || chroot(".") != 0) {
      return Error{"cannot enter the root directory of " + target_label(target) + ": " + std::strerror(errno)};
    }
    if (auto switched = take_credentials(target); !switched) return switched.error();
  }
  if (auto dropped = drop_capabilities(); !dropped) return dropped.error();
  return job(TargetDirs{proc.get(), root.get(), cwd.get(), self_fds.get()});
}

void send_result(int channel, const Result<UniqueFd>& result) {
  std::string message;
  int fd = -1;
  if (!result) {
    message = "E" + result.error().message.substr(0, kMaxMessage - 1);
  } else if (*result) {
    message = "F";
    fd = result->get();
  } else {
    message = "N";
  }
  send_with_descriptor(channel, message.data(), message.size(), fd);
}

[[noreturn]] void run_helper(int channel, const TargetProcess& target, const TargetJob& job) {
  // Ctrl-C on nmprof reaches the helper too; it must still remove its trigger file.
  // It ends by itself: every wait in a job is bounded.
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) std::signal(signal, SIG_IGN);
  try {
    // Scoped so that the job's own cleanup (trigger files) runs before _exit.
    Result<UniqueFd> result = become_target_and_run(target, job);
    send_result(channel, result);
  } catch (...) {
    send_result(channel, Error{"the attach helper for " + target_label(target) + " failed: out of memory"});
  }
  _exit(0);
}

// nullopt when the helper died (or was stopped) without answering by `deadline`.
std::optional<Result<UniqueFd>> receive_result(int channel, const TargetProcess& target, Clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{channel, POLLIN, 0};
    int ready = left > 0 ? poll(&p, 1, static_cast<int>(std::min<long long>(left, 1 << 30))) : 0;
    if (ready > 0) break;
    if (ready == 0) return std::nullopt;
    if (errno != EINTR) return std::nullopt;
  }
  char message[kMaxMessage];
  int fd;
  ssize_t n = receive_with_descriptor(channel, message, sizeof message, &fd);
  UniqueFd received(fd);
  if (n <= 0) return std::nullopt;
  if (message[0] == 'E') return Error{std::string(message + 1, static_cast<size_t>(n - 1))};
  if (message[0] == 'F' && !received) {
    return Error{"the attach helper for " + target_label(target) + " sent no file descriptor"};
  }
  return Result<UniqueFd>(std::move(received));
}

}  // namespace

Result<UniqueFd> run_as_target(const TargetProcess& target, const TargetJob& job, std::chrono::milliseconds timeout,
                               const TargetJob& if_killed) {
  int channel[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, channel) != 0) {
    return Error{std::string("cannot create a socket pair for the attach helper: ") + std::strerror(errno)};
  }
  UniqueFd ours(channel[0]);
  UniqueFd theirs(channel[1]);
  pid_t helper = fork();
  if (helper < 0) return Error{std::string("cannot fork the attach helper: ") + std::strerror(errno)};
  if (helper == 0) {
    ours = UniqueFd();
    run_helper(theirs.get(), target, job);
  }
  theirs = UniqueFd();
  std::optional<Result<UniqueFd>> result = receive_result(ours.get(), target, Clock::now() + timeout);
  if (!result) kill(helper, SIGKILL);  // stopped, or stuck: its answer no longer counts
  int status = 0;
  while (waitpid(helper, &status, 0) < 0 && errno == EINTR) {
  }
  if (result) return std::move(*result);
  if (if_killed) (void)run_as_target(target, if_killed, timeout);
  std::string how = WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                        : "exited with status " + std::to_string(WEXITSTATUS(status));
  return Error{"the attach helper for " + target_label(target) + " " + how + " without an answer" +
               (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? " (within " + describe_duration(timeout) + ")"
                                                                    : "")};
}

}  // namespace nmprof::attach
