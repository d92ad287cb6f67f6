// The directory of the target where nmprof and its agent put their files (the agent's
// copy, reply files, recordings): its /tmp, reached through /proc/<pid>/root and held
// open, so that what is made there can still be removed after the target has exited.
// A root without /tmp (a chroot, a minimal container image) gets a directory of
// nmprof's instead, /nmprof-tmp-<uid>: owned by the target's user, mode 0700, found
// again by the next request and removed once empty.
//
//   auto tmp = open_target_tmp(target);
//   create_in_target(target, tmp->unpredictable_path("nmprof-reply-", ""), 0600);
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "attach/fd_io.h"
#include "attach/result.h"
#include "attach/target_process.h"

namespace nmprof::attach {

struct TargetTmp {
  UniqueFd dir;      // O_PATH
  std::string path;  // as the target sees it: "/tmp", "/nmprof-tmp-1000"
  std::string here;  // as nmprof reaches it: the same in nmprof's root, "/proc/4123/root/tmp" otherwise
  UniqueFd root;     // the target's root (O_PATH), for nmprof's own directory only
  // "<path>/<prefix><26 random characters><suffix>": a name nobody can guess.
  std::string unpredictable_path(std::string_view prefix, std::string_view suffix) const;
  bool own() const { return static_cast<bool>(root); }
};

// The target's /tmp, or nmprof's own directory in its root (made now, or by an earlier
// request). Errors: it has neither and nmprof cannot make it (a read-only root), or
// what is at that name is not nmprof's.
Result<TargetTmp> open_target_tmp(const TargetProcess& target);

// nmprof's own /tmp of this machine (for what a target that has exited left there).
Result<TargetTmp> open_local_tmp();

// Deletes `name` in `tmp` with the target's file system ids, only while it is the
// file open as `same_as`; works after the target has exited too.
Result<void> remove_from_target_tmp(const TargetProcess& target, const TargetTmp& tmp, std::string_view name,
                                    int same_as);

// Removes nmprof's own directory once nothing is left in it (the target's /tmp stays).
void remove_if_empty(const TargetTmp& tmp);

}  // namespace nmprof::attach
