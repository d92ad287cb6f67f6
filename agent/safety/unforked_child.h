// Tells a child made without fork() (clone() without CLONE_VM, syscall(SYS_fork)),
// in which no pthread_atfork handler ran, from the process itself and from a child
// that shares its memory (vfork(), posix_spawn). Such a child has a copy of the
// agent's state as it was, locks held by threads it does not have included, and a
// writer thread it does not have: it must do what fork()'s handler does before the
// agent works in it. A page the kernel wipes in a child that gets a copy of the
// memory (MADV_WIPEONFORK) holds a mark; fork()'s handler puts it back in the child,
// so a zero mark means: a child that nobody followed yet. One load to look.
#pragma once

#include <atomic>
#include <cstdint>

namespace nmprof::unforked_child {

enum Mark : uint32_t { kUnfollowed = 0, kFollowing = 1, kFollowed = 2 };

extern std::atomic<uint32_t>* g_mark;  // null when the kernel cannot wipe pages (before Linux 4.14)

// Maps the page. False when the kernel cannot: such children are then left alone,
// as vfork() children are (their samples are not recorded).
bool watch();

inline bool unfollowed() {
  std::atomic<uint32_t>* mark = g_mark;
  return mark && __builtin_expect(mark->load(std::memory_order_acquire) != kFollowed, 0);
}

// True for the one caller that is to follow the child (others get false, and stay
// out of the agent until it is done).
bool claim();
// fork()'s handler in the child, or the claimer once done.
void mark_followed();

}  // namespace nmprof::unforked_child
