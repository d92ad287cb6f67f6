#include "attach/target_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "attach/fd_io.h"

namespace nmprof::attach {
namespace {

std::string proc_path(pid_t pid, const char* name) {
  return "/proc/" + std::to_string(pid) + "/" + name;
}

Error no_such_process(pid_t pid) {
  return Error{"no such process: " + std::to_string(pid) +
               " (list processes with `ps -e -o pid,user,args`)"};
}

char state_in(const std::string& stat_path) {
  auto stat = read_text_at(AT_FDCWD, stat_path.c_str());
  size_t end = stat ? stat->rfind(") ") : std::string::npos;  // the command may hold ") "
  return end != std::string::npos && end + 2 < stat->size() ? (*stat)[end + 2] : 'X';
}

bool is_ended(char state) { return state == 'Z' || state == 'X'; }

}  // namespace

std::string describe_credentials(uid_t uid, gid_t gid) {
  std::string ids = "uid " + std::to_string(uid) + ", gid " + std::to_string(gid);
  passwd entry{};
  passwd* found = nullptr;
  char buffer[4096];
  if (getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) == 0 && found) {
    return std::string("user '") + found->pw_name + "' (" + ids + ")";
  }
  return ids;
}

Result<TargetProcess> inspect_process(pid_t pid) {
  if (pid <= 0) return no_such_process(pid);
  auto text = read_text_at(AT_FDCWD, proc_path(pid, "status").c_str());
  if (!text) return no_such_process(pid);
  auto status = parse_process_status(*text);
  if (!status) return Error{"cannot parse " + proc_path(pid, "status") + "; is /proc a Linux procfs?"};

  TargetProcess target;
  target.pid = pid;
  target.nspid = status->nspid ? status->nspid : pid;  // pre-4.1 kernels: assume no PID namespace
  target.status = std::move(*status);
  if (auto comm = read_text_at(AT_FDCWD, proc_path(pid, "comm").c_str())) {
    target.name = comm->substr(0, comm->find('\n'));
  }
  return target;
}

char process_state(pid_t pid) { return state_in(proc_path(pid, "stat")); }

bool has_ended(pid_t pid) { return is_ended(process_state(pid)); }

bool thread_has_ended(pid_t pid, pid_t tid) {
  return is_ended(state_in(proc_path(pid, ("task/" + std::to_string(tid) + "/stat").c_str())));
}

Result<void> check_attach_permission(const TargetProcess& target, std::string_view kind) {
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (uid == 0 || (uid == target.status.euid && gid == target.status.egid)) return {};
  std::string owner = describe_credentials(target.status.euid, target.status.egid);
  std::string rule = kind == "JVM" ? "; HotSpot only accepts clients with its own uid and gid, or root:" : ";";
  return Error{"permission denied: " + std::string(kind) + " " + std::to_string(target.pid) + " runs as " + owner +
               " and nmprof as " + describe_credentials(uid, gid) + rule +
               " run nmprof as that user or as root (sudo)"};
}

pid_t host_pid_of(const TargetProcess& target, pid_t nspid) {
  if (target.nspid == target.pid) return nspid;  // no pid namespace of its own
  struct stat own {};
  if (stat(proc_path(target.pid, "ns/pid").c_str(), &own) != 0) return 0;
  DIR* proc = opendir("/proc");
  if (!proc) return 0;
  pid_t found = 0;
  while (dirent* entry = readdir(proc)) {
    pid_t pid = atoi(entry->d_name);
    struct stat ns {};
    if (pid <= 0 || stat(proc_path(pid, "ns/pid").c_str(), &ns) != 0 || ns.st_ino != own.st_ino) continue;
    auto text = read_text_at(AT_FDCWD, proc_path(pid, "status").c_str());
    auto status = text ? parse_process_status(*text) : std::nullopt;
    if (status && status->nspid == nspid) {
      found = pid;
      break;
    }
  }
  closedir(proc);
  return found;
}

Result<std::string> read_proc_file(const TargetProcess& target, const char* name) {
  std::string path = proc_path(target.pid, name);
  auto text = read_text_at(AT_FDCWD, path.c_str());
  if (text) return std::move(*text);
  if (errno == ENOENT || errno == ESRCH) return no_such_process(target.pid);
  if (errno == EACCES || errno == EPERM) {
    // Root is refused too without CAP_SYS_PTRACE (a container) or by a security module.
    std::string fix = geteuid() == 0 ? "even root is refused: give nmprof CAP_SYS_PTRACE (in a container: "
                                       "--cap-add SYS_PTRACE) or relax that restriction"
                                     : "run nmprof as root or relax that restriction";
    return Error{"permission denied reading " + path +
                 ": ptrace access to the process is restricted (it is not dumpable, /proc is mounted "
                 "with hidepid=, or a security module such as Yama, SELinux or AppArmor denies it); " + fix};
  }
  return Error{"cannot read " + path + ": " + std::strerror(errno)};
}

}  // namespace nmprof::attach
