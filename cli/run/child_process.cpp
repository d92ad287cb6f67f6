#include "cli/run/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace nmprof::cli {

std::vector<std::string> environment_with(const Environment& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; *e; e++) {
    bool replaced = false;
    for (const auto& [name, value] : overrides)
      replaced |= strncmp(*e, name.c_str(), name.size()) == 0 && (*e)[name.size()] == '=';
    if (!replaced) env.emplace_back(*e);
  }
  for (const auto& [name, value] : overrides) env.push_back(name + "=" + value);
  return env;
}

std::vector<char*> pointers_to(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

bool run_child(const std::string& path, const std::vector<std::string>& argv, const Environment& overrides,
               ProfileSignals& signals, ChildExit* result, std::string* error,
               const std::function<void(long pid)>& started) {
  std::vector<std::string> env = environment_with(overrides);
  std::vector<std::string> args = argv;
  std::vector<char*> envp = pointers_to(env);
  std::vector<char*> argp = pointers_to(args);

  // The child reports a failed exec through this pipe; a successful exec closes it.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + strerror(errno);
    return false;
  }
  signals.block();
  pid_t pid = fork();
  int fork_errno = errno;
  if (pid == 0) {
    signals.restore_in_child();
    close(report[0]);
    execve(path.c_str(), argp.data(), envp.data());
    int e = errno;
    ssize_t ignored = write(report[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
  }
  if (pid > 0) signals.set_command(pid);
  signals.unblock();
  close(report[1]);
  if (pid < 0) {
    *error = std::string("fork: ") + strerror(fork_errno);
    close(report[0]);
    return false;
  }
  int exec_errno = 0;
  ssize_t n;
  do n = read(report[0], &exec_errno, sizeof exec_errno);
  while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n != sizeof exec_errno && started) started(pid);

  // Waited for without reaping it first: until the pid is forgotten, a signal sent
  // to nmprof goes to it, and its number cannot be given to another process meanwhile.
  siginfo_t ended = {};
  while (waitid(P_PID, static_cast<id_t>(pid), &ended, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  signals.set_command(0);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (n == sizeof exec_errno) {
    *error = "cannot run " + path + ": " + strerror(exec_errno);
    return false;
  }
  result->pid = pid;
  if (WIFSIGNALED(status)) {
    result->signal = WTERMSIG(status);
    result->status = 128 + result->signal;
  } else {
    result->status = WEXITSTATUS(status);
  }
  return true;
}

}  // namespace nmprof::cli
