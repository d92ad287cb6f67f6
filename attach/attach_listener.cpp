#include "attach/attach_listener.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "attach/timeouts.h"
#include "common/safe_file.h"

namespace nmprof::attach {
namespace {

using namespace std::chrono_literals;

// The trigger file; deleted when this goes out of scope.
class TriggerFile {
 public:
  TriggerFile(int dir, std::string name) : dir_(dir), name_(std::move(name)) {}
  TriggerFile(TriggerFile&& other) noexcept : dir_(std::exchange(other.dir_, -1)), name_(std::move(other.name_)) {}
  TriggerFile& operator=(TriggerFile&&) = delete;
  ~TriggerFile() {
    if (dir_ >= 0) unlinkat(dir_, name_.c_str(), 0);
  }

 private:
  int dir_;
  std::string name_;
};

// Paths as nmprof sees them, for messages.
struct Names {
  std::string socket;   // .java_pid<nspid>
  std::string trigger;  // .attach_pid<nspid>
  std::string tmp_path;
  std::string cwd_path;
};

// The JVM looks in its working directory first, then in /tmp. It ignores a trigger
// not owned by its euid (or root): some file systems remap the owner, so check it.
// Whatever another user put there under that name (a FIFO would block the open) is
// left alone (safe_file.h).
Result<TriggerFile> create_trigger(const TargetDirs& dirs, int tmp, const Names& names) {
  int last_error = 0;
  for (int dir : {dirs.cwd, tmp}) {
    if (dir < 0) continue;
    int created = safe_file::create_or_open_owned(dir, names.trigger.c_str(), O_WRONLY, 0660);
    if (created < 0) {
      last_error = created;
      continue;
    }
    UniqueFd fd(created);
    struct stat st {};
    if (fstat(fd.get(), &st) == 0 && st.st_uid == geteuid()) return TriggerFile(dir, names.trigger);
    unlinkat(dir, names.trigger.c_str(), 0);
    last_error = safe_file::kNotOwned;
  }
  return Error{"cannot create the attach trigger file " + names.trigger + " in " + names.cwd_path + " or " +
               names.tmp_path + ": " + safe_file::error_text(last_error)};
}

bool catches_sigquit(const TargetDirs& dirs) {
  auto text = read_text_at(dirs.proc, "status");
  auto status = text ? parse_process_status(*text) : std::nullopt;
  return status && status->catches(SIGQUIT);
}

// A connected socket, an empty one while nothing listens yet, or an error.
// The helper's working directory is the target's tmp, so the name is short enough
// for sun_path however long the /proc path would be.
Result<UniqueFd> try_connect(const TargetProcess& target, int tmp, const Names& names, Clock::time_point deadline) {
  struct stat st {};
  if (fstatat(tmp, names.socket.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return UniqueFd();
  // Anyone can create files in a shared /tmp: a planted file is named, not waited on.
  if (!S_ISSOCK(st.st_mode) || st.st_uid != target.status.euid) {
    return Error{names.tmp_path + "/" + names.socket + " is " +
                 (S_ISSOCK(st.st_mode) ? "a socket of " + describe_credentials(st.st_uid, st.st_gid)
                                       : std::string("not a socket")) +
                 ", not JVM " + std::to_string(target.pid) + "'s attach socket; remove that file and retry"};
  }
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return Error{std::string("cannot create a UNIX socket: ") + std::strerror(errno)};
  // connect() blocks while the listener's backlog is full; bound that wait.
  long long micros = std::max<long long>(
      std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now()).count(), 1000);
  timeval limit{static_cast<time_t>(micros / 1000000), static_cast<suseconds_t>(micros % 1000000)};
  setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, names.socket.c_str(), names.socket.size() + 1);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    // Refused: a stale socket of a dead JVM (or one whose listener is gone); the
    // trigger makes the JVM bind a new one. EAGAIN: backlog full until the deadline.
    if (errno == ECONNREFUSED || errno == ENOENT || errno == EAGAIN) return UniqueFd();
    return Error{"cannot connect to " + names.tmp_path + "/" + names.socket + ": " + std::strerror(errno)};
  }
  // Anyone can create files in a shared /tmp: make sure the JVM itself listens there.
  ucred peer{};
  socklen_t size = sizeof peer;
  if (getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 || peer.pid != target.pid) {
    return Error{"the attach socket " + names.tmp_path + "/" + names.socket + " belongs to process " +
                 std::to_string(peer.pid) + ", not to JVM " + std::to_string(target.pid) +
                 "; remove that file and retry"};
  }
  return fd;
}

Error listener_timeout(const TargetProcess& target, const Names& names, std::chrono::milliseconds timeout,
                       bool signalled) {
  std::string jvm = "JVM " + std::to_string(target.pid);
  if (!signalled) {
    return Error{jvm + " has no attach socket " + names.tmp_path + "/" + names.socket +
                 " and did not handle SIGQUIT within " + describe_duration(timeout) +
                 " (it is still starting, or runs with -Xrs and its socket was deleted); retry, or restart the JVM"};
  }
  return Error{jvm + " did not open its attach socket " + names.tmp_path + "/" + names.socket + " within " +
               describe_duration(timeout) +
               " of SIGQUIT; it is hung, still starting, or has attach disabled (-XX:+DisableAttachMechanism, e.g. "
               "in an options file); retry with a longer timeout, or start it under nmprof: `nmprof run -- <command>`"};
}

Names names_of(const TargetProcess& target) {
  std::string proc = "/proc/" + std::to_string(target.pid);
  std::string nspid = std::to_string(target.nspid);
  return Names{".java_pid" + nspid, ".attach_pid" + nspid, proc + "/root/tmp", proc + "/cwd"};
}

}  // namespace

Result<UniqueFd> remove_trigger_files(const TargetProcess& target, const TargetDirs& dirs) {
  std::string trigger = names_of(target).trigger;
  UniqueFd tmp(openat(dirs.root, "tmp", O_PATH | O_DIRECTORY | O_CLOEXEC));
  for (int dir : {dirs.cwd, tmp.get()}) {
    struct stat st {};
    if (dir >= 0 && fstatat(dir, trigger.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
        st.st_uid == geteuid())
      unlinkat(dir, trigger.c_str(), 0);
  }
  return UniqueFd();
}

Result<UniqueFd> connect_to_attach_listener(const TargetProcess& target, const TargetDirs& dirs,
                                            std::chrono::milliseconds timeout) {
  Names names = names_of(target);

  UniqueFd tmp(openat(dirs.root, "tmp", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!tmp || fchdir(tmp.get()) != 0) {
    return Error{"cannot open the target's /tmp (" + names.tmp_path + "): " + std::strerror(errno)};
  }

  auto deadline = Clock::now() + timeout;
  std::optional<TriggerFile> trigger;
  std::optional<Clock::time_point> signalled_at;
  bool signalled_again = false;
  for (auto pause = 20ms;; pause += 20ms) {
    auto connection = try_connect(target, tmp.get(), names, deadline);
    if (!connection || *connection) return connection;
    if (kill(target.pid, 0) != 0 && errno == ESRCH) {
      return Error{"JVM " + std::to_string(target.pid) + " exited during the attach"};
    }
    auto now = Clock::now();
    // Like the JDK's own client: signal once more when half the time has passed.
    bool signal_due = !signalled_at || (!signalled_again && now - *signalled_at >= timeout / 2);
    if (signal_due && catches_sigquit(dirs)) {
      if (!trigger) {
        auto created = create_trigger(dirs, tmp.get(), names);
        if (!created) return created.error();
        trigger.emplace(std::move(*created));
      }
      kill(target.pid, SIGQUIT);
      if (signalled_at) signalled_again = true;
      signalled_at = now;
    }
    if (now >= deadline) return listener_timeout(target, names, timeout, signalled_at.has_value());
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
  }
}

}  // namespace nmprof::attach
