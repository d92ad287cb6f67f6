// Entry points for the calls that change a process's user id (setuid and friends).
// A server started as root (php-fpm, nginx) forks workers that drop to another user;
// by then a worker could no longer create its recording in the directory root chose,
// so the file is opened just before, and written through that descriptor.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include "agent/hooks/hook_events.h"
#include "agent/hooks/hook_table.h"

namespace nmprof {

template <int K>
struct SetuidHook {
  static int call(uid_t uid) {
    on_user_id_changing();
    return hook_target<int (*)(uid_t)>(kSetuid, K)(uid);
  }
};

template <int K>
struct SeteuidHook {
  static int call(uid_t uid) {
    on_user_id_changing();
    return hook_target<int (*)(uid_t)>(kSeteuid, K)(uid);
  }
};

template <int K>
struct SetreuidHook {
  static int call(uid_t real, uid_t effective) {
    on_user_id_changing();
    return hook_target<int (*)(uid_t, uid_t)>(kSetreuid, K)(real, effective);
  }
};

template <int K>
struct SetresuidHook {
  static int call(uid_t real, uid_t effective, uid_t saved) {
    on_user_id_changing();
    return hook_target<int (*)(uid_t, uid_t, uid_t)>(kSetresuid, K)(real, effective, saved);
  }
};

}  // namespace nmprof
