#include "cli/run/seccomp_probe.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/output/recording_merge.h"
#include "cli/output/staging_directory.h"
#include "cli/run/child_process.h"
#include "common/seccomp_status.h"
#include "common/signal_text.h"
#include "protocol/agent_options.h"

namespace nmprof::cli {
namespace {

constexpr int kProbeSeconds = 30;

SeccompStatus own_seccomp_status() {
  std::ifstream in("/proc/self/status");
  std::stringstream text;
  text << in.rdbuf();
  return parse_seccomp_status(text.str());
}

void* volatile g_sink;

// Allocations of many sizes, each one sampled (the probe records every one).
void allocate_and_free() {
  for (int i = 0; i < 2000; i++) {
    g_sink = malloc(64 + static_cast<size_t>(i % 64) * 61);
    free(g_sink);
  }
}

// Runs the probe, with its stderr into `log`; its wait status, or -1 when it could not
// be started or did not end in time (it is killed then).
int run_probe(const std::string& agent, const AgentOptions& options, int log) {
  std::vector<std::string> env =
      environment_with({{"LD_PRELOAD", agent}, {kOptionsVariable, format_agent_options(options)}});
  std::vector<char*> envp = pointers_to(env);
  std::vector<std::string> args = {"nmprof", kSeccompProbeArgument};
  std::vector<char*> argp = pointers_to(args);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, log, STDERR_FILENO);
  pid_t pid;
  int spawned = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argp.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  for (int waited_ms = 0; waitpid(pid, &status, WNOHANG) == 0; waited_ms += 10) {
    if (waited_ms >= kProbeSeconds * 1000) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    struct timespec ten_ms = {0, 10000000};
    nanosleep(&ten_ms, nullptr);
  }
  return status;
}

std::string first_line_of(int fd) {
  char text[512] = {};
  ssize_t n = pread(fd, text, sizeof text - 1, 0);
  std::string line(text, n > 0 ? static_cast<size_t>(n) : 0);
  line = line.substr(0, line.find('\n'));
  return line.starts_with("nmprof: ") ? line.substr(8) : line;
}

}  // namespace

int checked_seccomp_filters(const std::string& agent, std::string* error) {
  SeccompStatus status = own_seccomp_status();
  if (!status.filtered()) return 0;
  std::string filters = std::to_string(status.filter_count()) + " seccomp filter(s)";
  StagingDirectory probe_directory;
  if (!probe_directory.create("/tmp", error)) return -1;
  AgentOptions options;
  options.interval = 0;
  options.file = probe_directory.path() + "/%p.probe";
  options.seccomp_checked = static_cast<unsigned>(status.filter_count());
  int log = openat(probe_directory.fd(), "probe.log", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  int probe = log < 0 ? -1 : run_probe(agent, options, log);
  bool recorded = false;
  for (const std::string& name : probe_directory.names(".probe")) {
    int fd = probe_directory.open_file(name);
    if (fd < 0) continue;
    std::vector<uint8_t> bytes(complete_chunks(fd));
    recorded |= pread(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()) && holds_samples(bytes);
    close(fd);
  }
  std::string said = log < 0 ? "" : first_line_of(log);
  if (log >= 0) close(log);
  probe_directory.remove();
  std::string what = "nmprof runs under " + filters + ", which its command inherits";
  if (probe != -1 && WIFSIGNALED(probe)) {
    *error = what + ", and a process was killed by " + signal_text(WTERMSIG(probe)) +
             " for the agent's system calls: not running the command (profile it where no such filter applies)";
    return -1;
  }
  if (probe == -1 || !WIFEXITED(probe) || WEXITSTATUS(probe) != 0 || !recorded) {
    *error = what + ", and the agent could not record under them" +
             (said.empty() ? std::string() : " (it said: " + said + ")") + ": not running the command";
    return -1;
  }
  return status.filter_count();
}

int seccomp_probe_main(int argc, char** argv) {
  std::thread first(allocate_and_free), second(allocate_and_free);
  first.join();
  second.join();
  if (argc > 2) return 0;  // the exec'd image
  pid_t child = fork();
  if (child == 0) {
    allocate_and_free();
    exit(0);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  execl("/proc/self/exe", argv[0], kSeccompProbeArgument, "exec", static_cast<char*>(nullptr));
  return 1;
}

}  // namespace nmprof::cli
