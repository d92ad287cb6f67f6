#include "attach/ptrace/ptrace_permission.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "attach/fd_io.h"

namespace nmprof::attach {
namespace {

constexpr int kCapSysPtrace = 19;

int ptrace_scope() {
  auto text = read_text_at(AT_FDCWD, "/proc/sys/kernel/yama/ptrace_scope");
  return text ? atoi(text->c_str()) : 0;
}

bool has_cap_sys_ptrace() {
  auto status = read_text_at(AT_FDCWD, "/proc/self/status");
  size_t at = status ? status->find("\nCapEff:") : std::string::npos;
  if (at == std::string::npos) return false;
  unsigned long long caps = strtoull(status->c_str() + at + 8, nullptr, 16);
  return caps & (1ULL << kCapSysPtrace);
}

}  // namespace

pid_t tracer_of(pid_t pid, pid_t tid) {
  std::string path = "/proc/" + std::to_string(pid) + (tid ? "/task/" + std::to_string(tid) : "") + "/status";
  auto status = read_text_at(AT_FDCWD, path.c_str());
  size_t at = status ? status->find("\nTracerPid:") : std::string::npos;
  return at == std::string::npos ? 0 : static_cast<pid_t>(strtol(status->c_str() + at + 11, nullptr, 10));
}

std::string explain_ptrace_denied(const PtraceFacts& f) {
  std::string process = "process " + std::to_string(f.pid);
  std::string denied = "permission denied: cannot ptrace " + process + ": ";
  // A thread has one tracer at a time, whatever the rights.
  if (f.tracer)
    return "cannot ptrace " + process + ": process " + std::to_string(f.tracer) + " (" + f.tracer_name +
           ") traces it already (a debugger, strace or another nmprof attach); attach again once it has detached";
  if (f.ptrace_scope >= 3)
    return denied + "kernel.yama.ptrace_scope is 3, which forbids ptrace until the next reboot; start the program "
                    "under nmprof instead: `nmprof run -- <command>`";
  if (f.nmprof_euid == 0 || f.has_cap_sys_ptrace) {
    if (!f.has_cap_sys_ptrace)
      return denied + "nmprof runs as root but without CAP_SYS_PTRACE (a container started without it?); give it "
                      "that capability (docker run --cap-add SYS_PTRACE) or run nmprof on the host";
    return denied + "a security module (SELinux, AppArmor) or seccomp forbids it; allow ptrace for nmprof, or "
                    "start the program under nmprof: `nmprof run -- <command>`";
  }
  if (f.target_euid != f.nmprof_euid)
    return denied + "it runs as " + describe_credentials(f.target_euid, f.target_egid) + " and nmprof as " +
           describe_credentials(f.nmprof_euid, f.nmprof_egid) + "; run nmprof as that user or as root (sudo)";
  if (!f.target_dumpable)
    return denied + "it is not dumpable (it called prctl(PR_SET_DUMPABLE, 0) or changed its credentials), so "
                    "only root may ptrace it; run nmprof as root (sudo)";
  if (f.ptrace_scope == 2)
    return denied + "kernel.yama.ptrace_scope is 2 (admin only); run nmprof as root (sudo)";
  if (f.ptrace_scope == 1)
    return denied + "kernel.yama.ptrace_scope is 1 (only a parent may ptrace its children); run nmprof as root "
                    "(sudo), or allow it with `sysctl kernel.yama.ptrace_scope=0`";
  return denied + "the kernel refused it; run nmprof as root (sudo)";
}

std::string explain_ptrace_denied(const TargetProcess& target, pid_t tid) {
  PtraceFacts facts;
  facts.tracer = tracer_of(target.pid, tid);
  if (facts.tracer) {
    auto comm = read_text_at(AT_FDCWD, ("/proc/" + std::to_string(facts.tracer) + "/comm").c_str());
    facts.tracer_name = comm ? comm->substr(0, comm->find('\n')) : "?";
  }
  facts.pid = target.pid;
  facts.nmprof_euid = geteuid();
  facts.nmprof_egid = getegid();
  facts.target_euid = target.status.euid;
  facts.target_egid = target.status.egid;
  struct stat st {};
  if (stat(("/proc/" + std::to_string(target.pid)).c_str(), &st) == 0)
    facts.target_dumpable = st.st_uid == target.status.euid;
  facts.ptrace_scope = ptrace_scope();
  facts.has_cap_sys_ptrace = has_cap_sys_ptrace();
  return explain_ptrace_denied(facts);
}

}  // namespace nmprof::attach
