// Files the target writes (the agent's recordings), as nmprof reads them and hands
// them to the user who asked for them.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "attach/fd_io.h"
#include "attach/result.h"
#include "attach/target_process.h"

namespace nmprof::attach {

// Where nmprof can read a path as the target sees it: /proc/<pid>/root/<path>, or
// /proc/<pid>/cwd/<path> for a relative one. Valid across mount namespaces while the
// target lives. For display and read-only use by the same user; copy_from_target is
// the safe way to read it as root.
std::string client_path(const TargetProcess& target, std::string_view path_in_target);

struct FileOwner {
  uid_t uid;
  gid_t gid;
};

// Who a result file must belong to. Under sudo (euid 0 with SUDO_UID and SUDO_GID
// set) the user who ran sudo; otherwise nmprof's real uid and gid. The owner of the
// destination directory is not used: for /tmp or a shared directory it is root or
// someone else.
FileOwner invoking_user();

// Copies the regular file `path_in_target` (as the target sees it) to `destination`,
// created or truncated (mode 0666 & ~umask) and owned by `owner`. The source is
// opened by a helper acting as the target (its credentials and root directory), so
// a symbolic link planted in the target cannot make root read a host file.
Result<void> copy_from_target(const TargetProcess& target, std::string_view path_in_target,
                              const std::string& destination, FileOwner owner);

// Opens the regular file `path_in_target` for reading, as copy_from_target does. The
// descriptor stays readable after the target exits (and its container's /tmp with it).
Result<UniqueFd> open_in_target(const TargetProcess& target, std::string_view path_in_target);

// Copies the first `length` bytes of `source` (all of it if nullopt) to
// `destination`, as copy_from_target does; source_name is for messages.
Result<void> copy_to_user(int source, std::optional<size_t> length, const std::string& source_name,
                          const std::string& destination, FileOwner owner);

// True when the target sees the same root directory as nmprof (no container): paths
// of nmprof's files are then valid in the target too.
bool shares_root_with(const TargetProcess& target);

// Makes `local_file` readable by the target at `path_in_target` (created with its
// rights, mode 0755; an existing file of the same size is kept).
Result<void> place_in_target(const TargetProcess& target, const std::string& local_file,
                             std::string_view path_in_target);

// Deletes `path_in_target` in the target's view and with its rights (a temporary
// output file, once copied).
Result<void> remove_from_target(const TargetProcess& target, std::string_view path_in_target);

}  // namespace nmprof::attach
