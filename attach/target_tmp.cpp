#include "attach/target_tmp.h"

#include <fcntl.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "attach/target_files.h"

namespace nmprof::attach {
namespace {

std::string reached_from_here(const TargetProcess& target, const std::string& path) {
  return shares_root_with(target) ? path : client_path(target, path);
}

std::string own_name(const TargetProcess& target) { return "nmprof-tmp-" + std::to_string(target.status.euid); }

// nmprof's directory in a root without /tmp: made by nmprof for the target's user
// (root makes it, as the target's user may not write its root), or made earlier. What
// is there must be a directory of the target's user that nobody else may enter: one
// planted by another user is not used.
Result<TargetTmp> own_tmp(const TargetProcess& target, UniqueFd root) {
  std::string name = own_name(target);
  std::string shown = client_path(target, "/" + name);
  std::string missing = "process " + std::to_string(target.pid) + " has no /tmp in its root (" +
                        client_path(target, "/tmp") + ": a chroot, or a container without one)";
  if (mkdirat(root.get(), name.c_str(), 0700) == 0) {
    if (geteuid() == 0 &&
        fchownat(root.get(), name.c_str(), target.status.euid, target.status.egid, AT_SYMLINK_NOFOLLOW) != 0) {
      std::string why = strerror(errno);
      unlinkat(root.get(), name.c_str(), AT_REMOVEDIR);
      return Error{missing + ", and nmprof cannot give " + shown + " to its user: " + why};
    }
  } else if (errno != EEXIST) {
    return Error{missing + ", and nmprof cannot make " + shown + " there for the agent's files: " + strerror(errno) +
                 "; give it a /tmp"};
  }
  UniqueFd dir(openat(root.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!dir || fstat(dir.get(), &st) != 0 || st.st_uid != target.status.euid || (st.st_mode & 077) != 0)
    return Error{missing + ", and " + shown + " is not the directory nmprof makes there (one of its user's, " +
                 "mode 0700): remove it, or give the process a /tmp"};
  return TargetTmp{std::move(dir), "/" + name, reached_from_here(target, "/" + name), std::move(root)};
}

}  // namespace

std::string TargetTmp::unpredictable_path(std::string_view prefix, std::string_view suffix) const {
  return path + "/" + std::string(prefix) + unpredictable_name() + std::string(suffix);
}

Result<TargetTmp> open_target_tmp(const TargetProcess& target) {
  std::string root_path = client_path(target, "/");
  UniqueFd root(open(root_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root) return Error{"cannot open " + root_path + ": " + strerror(errno)};
  UniqueFd tmp(openat(root.get(), "tmp", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (tmp) return TargetTmp{std::move(tmp), "/tmp", reached_from_here(target, "/tmp"), {}};
  if (errno != ENOENT) return Error{"cannot open " + client_path(target, "/tmp") + ": " + strerror(errno)};
  return own_tmp(target, std::move(root));
}

Result<TargetTmp> open_local_tmp() {
  UniqueFd tmp(open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!tmp) return Error{std::string("cannot open /tmp: ") + strerror(errno)};
  return TargetTmp{std::move(tmp), "/tmp", "/tmp", {}};
}

Result<void> remove_from_target_tmp(const TargetProcess& target, const TargetTmp& tmp, std::string_view name,
                                    int same_as) {
  std::string label = std::string(name) + " in the " + tmp.path + " of process " + std::to_string(target.pid);
  std::string file(name);
  struct stat expected {
  }, st{};
  if (fstat(same_as, &expected) != 0 || fstatat(tmp.dir.get(), file.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return Error{"cannot remove " + label + ": " + std::strerror(errno)};
  if (st.st_dev != expected.st_dev || st.st_ino != expected.st_ino)
    return Error{"not removing " + label + ": it is no longer the file nmprof read"};
  // The target's rights, not root's, for the unlink (this thread only).
  uid_t uid = setfsuid(target.status.euid);
  gid_t gid = setfsgid(target.status.egid);
  int removed = unlinkat(tmp.dir.get(), file.c_str(), 0);
  int error = errno;
  setfsgid(gid);
  setfsuid(uid);
  if (removed != 0) return Error{"cannot remove " + label + ": " + std::strerror(error)};
  return {};
}

void remove_if_empty(const TargetTmp& tmp) {
  // Fails while anything is in it: a recording still going on, another request's file.
  if (tmp.own()) unlinkat(tmp.root.get(), tmp.path.c_str() + 1, AT_REMOVEDIR);
}

}  // namespace nmprof::attach
