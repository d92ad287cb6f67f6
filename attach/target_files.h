// Files of the target, as nmprof reads them, and the few it makes there (the agent
// library when the target cannot read nmprof's, the agent's reply file). Everything
// happens in a helper acting as the target (as_target.h) and through safe_file.h:
// nothing planted in the target's /tmp by another user is ever used.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "attach/fd_io.h"
#include "attach/result.h"
#include "attach/target_process.h"

namespace nmprof::attach {

// Where nmprof can read a path as the target sees it: /proc/<pid>/root/<path>, or
// /proc/<pid>/cwd/<path> for a relative one. Valid across mount namespaces while the
// target lives. For messages; open_in_target is the safe way to read it.
std::string client_path(const TargetProcess& target, std::string_view path_in_target);

enum class Owner { anyone, target };

// Opens the regular file `path_in_target` (as the target sees it) for reading, with
// the target's credentials and root directory, so that a symbolic link planted in
// the target cannot make root read a host file, and never opening a FIFO or device
// node. Owner::target: only a file of the target's user with a single link (one
// the target wrote for nmprof). The descriptor stays readable after the target exits.
Result<UniqueFd> open_in_target(const TargetProcess& target, std::string_view path_in_target,
                                Owner owner = Owner::target);

// 26 random characters from [a-z0-9] (getrandom): a name part or token nobody can guess.
std::string unpredictable_name();

// A file nmprof made in the target: its path there, and nmprof's descriptor of it.
struct TargetFile {
  std::string path;
  UniqueFd fd;
};

// Creates `path_in_target` (from TargetTmp::unpredictable_path; it must not exist yet) with
// the target's rights and `mode`; the descriptor is open for reading and writing.
Result<TargetFile> create_in_target(const TargetProcess& target, const std::string& path_in_target, mode_t mode);

// True when the target sees the same root directory as nmprof (no container): paths
// of nmprof's files are then valid in the target too.
bool shares_root_with(const TargetProcess& target);

// Copies `local_file` to `path_in_target`, a new file of the target's user.
Result<TargetFile> place_in_target(const TargetProcess& target, const std::string& path_in_target,
                                   const std::string& local_file);

// Deletes `path_in_target` in the target's view and with its rights, only while it
// is the file open as `same_as` (a file nmprof made or asked for, never one a
// reply merely names).
Result<void> remove_from_target(const TargetProcess& target, std::string_view path_in_target, int same_as);

}  // namespace nmprof::attach
