#include "cli/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>

#include "cli/signals.h"

extern char** environ;

namespace nmprof::cli {
namespace {

volatile sig_atomic_t g_child = 0;

void forward(int signo, siginfo_t* info, void*) {
  // From the kernel (a terminal key or resize): the child, in our process group, got it
  // too. A SIGPIPE of our own write is ours alone.
  if (g_child > 0 && info->si_code <= 0 && !raised_by_own_write(signo, info)) kill(g_child, signo);
}

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

}  // namespace

bool run_child(const std::string& path, const std::vector<std::string>& argv, const Environment& overrides,
               ChildExit* result, std::string* error) {
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
  struct sigaction ours = {};
  ours.sa_sigaction = forward;
  ours.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&ours.sa_mask);
  constexpr size_t kCount = std::size(kForwardedSignals);
  struct sigaction previous[kCount];
  for (size_t i = 0; i < kCount; i++) sigaction(kForwardedSignals[i], &ours, &previous[i]);

  pid_t pid = fork();
  if (pid == 0) {
    for (size_t i = 0; i < kCount; i++) sigaction(kForwardedSignals[i], &previous[i], nullptr);
    close(report[0]);
    execve(path.c_str(), argp.data(), envp.data());
    int e = errno;
    ssize_t ignored = write(report[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
  }
  close(report[1]);
  if (pid < 0) {
    *error = std::string("fork: ") + strerror(errno);
    close(report[0]);
    return false;
  }
  g_child = pid;
  int exec_errno = 0;
  ssize_t n;
  do n = read(report[0], &exec_errno, sizeof exec_errno);
  while (n < 0 && errno == EINTR);
  close(report[0]);

  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  for (size_t i = 0; i < kCount; i++) sigaction(kForwardedSignals[i], &previous[i], nullptr);
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
