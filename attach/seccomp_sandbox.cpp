#include "attach/seccomp_sandbox.h"

#include <dirent.h>
#include <fcntl.h>

#include <cstdlib>

#include "attach/fd_io.h"
#include "common/seccomp_status.h"

namespace nmprof::attach {
namespace {

std::optional<SeccompStatus> thread_status(pid_t pid, const std::string& tid) {
  std::string path = "/proc/" + std::to_string(pid) + "/task/" + tid + "/status";
  auto text = read_text_at(AT_FDCWD, path.c_str());
  if (!text) return std::nullopt;
  return parse_seccomp_status(*text);
}

std::string plural(int n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

// "runs under a seccomp filter (Seccomp: 2, 1 filter, in /proc/4123/task/*/status)".
std::string what(const SeccompSandbox& s, pid_t pid) {
  std::string where = "in /proc/" + std::to_string(pid) + "/task/*/status)";
  if (s.filtered_threads == 0) {
    std::string threads = s.strict_threads == s.threads
                              ? "runs"
                              : plural(s.strict_threads, "thread") + " of " + std::to_string(s.threads) + " run";
    return threads + " in seccomp strict mode (Seccomp: 1, which allows read, write, exit and sigreturn alone, " +
           where;
  }
  std::string threads = s.filtered_threads == s.threads
                            ? "runs"
                            : plural(s.filtered_threads, "thread") + " of " + std::to_string(s.threads) + " run";
  std::string count = s.filters > 0 ? ", " + plural(s.filters, "filter") : "";
  return threads + " under a seccomp filter (Seccomp: 2" + count + ", " + where;
}

}  // namespace

std::optional<SeccompSandbox> seccomp_sandbox_of(pid_t pid) {
  SeccompSandbox sandbox;
  DIR* dir = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (!dir) return std::nullopt;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    auto status = thread_status(pid, entry->d_name);
    if (!status) continue;  // ended meanwhile
    sandbox.threads++;
    if (status->mode == 1) sandbox.strict_threads++;
    if (status->mode == 2) sandbox.filtered_threads++;
    if (status->filters > sandbox.filters) sandbox.filters = status->filters;
  }
  closedir(dir);
  if (sandbox.strict_threads == 0 && sandbox.filtered_threads == 0) return std::nullopt;
  return sandbox;
}

int seccomp_mode_of(pid_t pid, pid_t tid) {
  auto status = thread_status(pid, std::to_string(tid));
  return status ? status->mode : 0;
}

Result<void> check_native_sandbox(const TargetProcess& target, bool force) {
  auto sandbox = seccomp_sandbox_of(target.pid);
  if (!sandbox) return {};
  std::string process =
      "process " + std::to_string(target.pid) + " (" + target.name + ") " + what(*sandbox, target.pid);
  if (sandbox->strict_threads == sandbox->threads)
    return Error{process +
                 ": any call of the agent would kill it, and nmprof cannot attach, not even with --force; "
                 "profile it from its start with `nmprof run -- <command>`"};
  if (force) return {};
  return Error{process +
               ": a system call of nmprof's injection or of its agent that seccomp refuses would kill "
               "it; profile it from its start with `nmprof run -- <command>`, or attach with --force once "
               "you have read the risk (man nmprof, attach --force)"};
}

std::string jvm_sandbox_warning(const TargetProcess& target) {
  auto sandbox = seccomp_sandbox_of(target.pid);
  if (!sandbox) return "";
  return "JVM " + std::to_string(target.pid) + " " + what(*sandbox, target.pid) +
         ": the JVM loads the agent itself, but if the filter refuses one of the agent's system calls "
         "(a thread of its own, opening, locking and writing its recording), it may end the JVM; nmprof cannot "
         "read the filter to tell";
}

}  // namespace nmprof::attach
