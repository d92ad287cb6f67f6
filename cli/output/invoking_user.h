// Under sudo, the output file the user named is reached with the rights of the user
// who ran sudo (SUDO_UID, SUDO_GID and that user's groups), not root's: a sudoers
// rule for nmprof must not let `nmprof ... -o /etc/passwd` write where that user
// could not. Files are then created as, and owned by, that user.
#pragma once

#include <sys/types.h>

#include <vector>

namespace nmprof::cli {

// True when nmprof runs as root through sudo for another user.
bool invoked_through_sudo();

// While it exists, file system access (open, rename, unlink, access) uses the
// invoking user's ids and groups (setfsuid/setfsgid: this thread only, and nmprof
// keeps its other rights, e.g. to attach). Nothing changes without sudo.
class AsInvokingUser {
 public:
  AsInvokingUser();
  ~AsInvokingUser();
  AsInvokingUser(const AsInvokingUser&) = delete;
  AsInvokingUser& operator=(const AsInvokingUser&) = delete;

 private:
  bool switched_ = false;
  std::vector<gid_t> saved_groups_;
};

}  // namespace nmprof::cli
