#include "agent/safety/own_descriptors.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace nmprof::own_descriptors {

Bucket g_buckets[kBuckets];

namespace {

enum Kind : uint8_t { kHeld, kKept };

struct Slot {
  std::atomic<bool> taken{false};
  std::atomic<uint8_t> kind{kHeld};
  std::atomic<int> fd{-1};           // the registered number, -1 for none
  std::atomic<int> users{0};         // kept: the agent's system calls on it in progress
  std::atomic<uintptr_t> owner{0};   // kept: the thread moving, pinning or closing it
  std::atomic<bool> lost{false};     // kept: its number went to the program
  std::atomic<bool> inherited{false};  // kept: passed on to exec'd images (no FD_CLOEXEC, moves included)
  dev_t device = 0;                  // the file, as registered
  ino_t inode = 0;
};

Slot g_slots[kSlots];
Bucket g_ranges;  // close_range and closefrom calls: they may close numbers of every bucket
// The process whose descriptor table the slots describe: a child that shares this
// memory but not the table (vfork) must not change them.
std::atomic<pid_t> g_pid{getpid()};

// The slots this thread holds (held) or uses (kept): a program's call in a signal
// handler that interrupted the agent on this thread must not wait for them.
__thread uint32_t t_mine __attribute__((tls_model("initial-exec")));

uintptr_t self() { return reinterpret_cast<uintptr_t>(&t_mine); }
uint32_t bit(int k) { return uint32_t{1} << k; }

// None of these is a cancellation point: the hooks run them in the program's threads.
int raw_close(int fd) { return static_cast<int>(syscall(SYS_close, fd)); }
int raw_fcntl(int fd, int command, int arg) { return static_cast<int>(syscall(SYS_fcntl, fd, command, arg)); }

// Brief waits: spin, then yield, then sleep 50 µs at a time.
void pause_a_little(int& round) {
  if (round < 64) {
    __builtin_ia32_pause();
  } else if (round < 256) {
    sched_yield();
  } else {
    struct timespec sleep = {0, 50000};
    syscall(SYS_nanosleep, &sleep, nullptr);
  }
  round++;
}

uint64_t now_millis() {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000 + static_cast<uint64_t>(now.tv_nsec) / 1000000;
}

int claim_slot() {
  for (int k = 0; k < kSlots; k++) {
    bool free = false;
    if (g_slots[k].taken.compare_exchange_strong(free, true, std::memory_order_acq_rel)) {
      Slot& s = g_slots[k];
      s.kind.store(kHeld, std::memory_order_relaxed);
      s.users.store(0, std::memory_order_relaxed);
      s.owner.store(0, std::memory_order_relaxed);
      s.lost.store(false, std::memory_order_relaxed);
      s.inherited.store(false, std::memory_order_relaxed);
      return k;
    }
  }
  return -1;
}

void free_slot(int k) { g_slots[k].taken.store(false, std::memory_order_release); }

// The bucket's count first, then the number: the agent's half of the Dekker pattern
// with begin_replacing() (which announces, then reads them).
void publish(Slot& s, int fd) {
  struct stat st;
  if (fstat(fd, &st) == 0) s.device = st.st_dev, s.inode = st.st_ino;
  bucket_of(static_cast<unsigned>(fd)).registered.fetch_add(1, std::memory_order_seq_cst);
  s.fd.store(fd, std::memory_order_seq_cst);
}

void unpublish(Slot& s, int fd) {
  s.fd.store(-1, std::memory_order_seq_cst);
  bucket_of(static_cast<unsigned>(fd)).registered.fetch_sub(1, std::memory_order_seq_cst);
}

// The slot registered with this number, or -1.
int slot_of(int fd) {
  if (fd < 0) return -1;  // a free slot holds -1: close(-1) is no call on the agent's
  for (int k = 0; k < kSlots; k++)
    if (g_slots[k].fd.load(std::memory_order_seq_cst) == fd) return k;
  return -1;
}

// Program calls counted in `b` that are in flight, beyond those taken for stuck.
// calls_finished is read first: equal counts then mean none was in flight when it
// was read.
uint64_t in_flight(Bucket& b) {
  uint64_t finished = b.calls_finished.load(std::memory_order_seq_cst);
  uint64_t started = b.calls_started.load(std::memory_order_seq_cst);
  uint64_t running = started - finished, stuck = b.stuck.load(std::memory_order_relaxed);
  if (running < stuck) b.stuck.store(running, std::memory_order_relaxed);  // a call taken for stuck ended after all
  return running > stuck ? running - stuck : 0;
}

// Until the calls in flight in `b` are done: false when some are still in flight
// after kStuckCallMillis. Those are taken for stuck from then on (a call cancelled
// inside its system call never counts itself done), so that later registrations do
// not wait for them.
bool wait_until_quiet(Bucket& b) {
  uint64_t deadline = now_millis() + kStuckCallMillis;
  for (int round = 0; in_flight(b) != 0; pause_a_little(round)) {
    if (now_millis() >= deadline) {
      b.stuck.store(b.calls_started.load(std::memory_order_seq_cst) - b.calls_finished.load(std::memory_order_seq_cst),
                    std::memory_order_relaxed);
      return false;
    }
  }
  return true;
}

struct Snapshot {
  uint64_t started[kBuckets];
  uint64_t ranges_started;
};

Snapshot take_snapshot() {
  Snapshot s;
  for (int i = 0; i < kBuckets; i++) s.started[i] = g_buckets[i].calls_started.load(std::memory_order_seq_cst);
  s.ranges_started = g_ranges.calls_started.load(std::memory_order_seq_cst);
  return s;
}

// No program call that could close `fd` started since the snapshot or is in flight.
bool untouched(Bucket& b, uint64_t started_before) {
  return in_flight(b) == 0 && b.calls_started.load(std::memory_order_seq_cst) == started_before;
}

// Whether the number `fd`, registered since `before` was taken, is the descriptor the
// agent made: no program call could have closed it meanwhile, or, once the calls that
// could are done, it still is the file `same_file` expects. Not when a call is still
// in flight after kStuckCallMillis: it might yet close the number (the number is
// forgotten then, not closed: a descriptor lost, once per stuck call).
template <typename Same>
bool proven_ours(const Snapshot& before, int fd, Same same_file) {
  Bucket& b = bucket_of(static_cast<unsigned>(fd));
  if (untouched(b, before.started[static_cast<unsigned>(fd) % kBuckets]) && untouched(g_ranges, before.ranges_started))
    return true;
  bool quiet = wait_until_quiet(b);
  return wait_until_quiet(g_ranges) && quiet && same_file(fd);
}

// Claims a slot and registers in it, held by this thread, the descriptor `make`
// returns: the slot, or -1 with errno (EMFILE: no slot; EAGAIN: the program took
// the number each time, and it was forgotten, not closed).
template <typename Make, typename Same>
int hold_new(Make make, Same same_file) {
  int k = claim_slot();
  if (k < 0) return errno = EMFILE, -1;
  Slot& s = g_slots[k];
  int error = EAGAIN;
  for (int attempt = 0; attempt < 3; attempt++) {
    Snapshot before = take_snapshot();
    int fd = make();
    if (fd < 0) {
      error = errno;
      break;
    }
    publish(s, fd);
    t_mine |= bit(k);
    if (proven_ours(before, fd, same_file)) return k;
    t_mine &= ~bit(k);
    unpublish(s, fd);
  }
  free_slot(k);
  errno = error;
  return -1;
}

bool same_inode(int fd, const struct stat& expected) {
  struct stat st;
  return fstat(fd, &st) == 0 && st.st_dev == expected.st_dev && st.st_ino == expected.st_ino;
}

// Where kept descriptors go: just below the soft RLIMIT_NOFILE, so that loops closing
// 3..255 or 3..1023 miss them, but not above 4096 (the kernel's table of a process
// grows to the highest number: a million entries take 8 MiB).
unsigned high_base() {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 3;
  rlim_t top = limit.rlim_cur > 4096 + 64 ? 4096 + 64 : limit.rlim_cur;
  return top > 64 + 3 ? static_cast<unsigned>(top - 64) : 3;
}

// F_DUPFD_CLOEXEC (F_DUPFD for a descriptor exec'd images inherit) at or above
// `base`, lower when nothing is free there.
int duplicate_high(int fd, unsigned base, bool inherited = false) {
  for (;; base /= 2) {
    int copy = raw_fcntl(fd, inherited ? F_DUPFD : F_DUPFD_CLOEXEC, static_cast<int>(base < 3 ? 3 : base));
    if (copy >= 0 || base <= 3) return copy;
  }
}

// Moves the kept descriptor of slot k from `fd` to another number (this thread owns
// the slot, and no agent call uses it). The old number stays registered until it is
// closed, the new one is registered first in a slot of its own: no program call can
// take either meanwhile. When no number is free, the slot is lost: the program's call
// takes the number and the file, and the agent reopens it by path.
void move(Slot& s, int fd) {
  struct stat original;
  int temporary = fstat(fd, &original) == 0
                      ? hold_new([fd, &s] { return duplicate_high(fd, high_base() / 2, s.inherited.load()); },
                                 [&original](int copy) { return same_inode(copy, original); })
                      : -1;
  if (temporary < 0) {
    s.lost.store(true, std::memory_order_relaxed);
    unpublish(s, fd);
    return;
  }
  Slot& t = g_slots[temporary];
  int moved = t.fd.load(std::memory_order_relaxed);
  raw_close(fd);
  bucket_of(static_cast<unsigned>(moved)).registered.fetch_add(1, std::memory_order_seq_cst);
  s.device = t.device, s.inode = t.inode;
  s.fd.store(moved, std::memory_order_seq_cst);
  bucket_of(static_cast<unsigned>(fd)).registered.fetch_sub(1, std::memory_order_seq_cst);
  t_mine &= ~bit(temporary);
  unpublish(t, moved);
  free_slot(temporary);
}

bool take_ownership(Slot& s) {
  uintptr_t none = 0;
  return s.owner.compare_exchange_strong(none, self(), std::memory_order_seq_cst);
}

void wait_for_owner(Slot& s) {
  for (int round = 0; s.owner.load(std::memory_order_acquire) != 0;) pause_a_little(round);
}

// Makes `fd` (in slot k) the agent's no longer: waits until a held one is closed, or
// moves a kept one once the agent's calls on it are done. False when this thread
// holds or uses it (a signal handler interrupted the agent).
bool take_away(int k, int fd) {
  Slot& s = g_slots[k];
  if (t_mine & bit(k)) return false;
  if (s.kind.load(std::memory_order_acquire) == kHeld) {
    for (int round = 0; s.fd.load(std::memory_order_acquire) == fd && s.kind.load(std::memory_order_acquire) == kHeld;)
      pause_a_little(round);
    return true;
  }
  if (!take_ownership(s)) {
    if (s.owner.load(std::memory_order_relaxed) == self()) return false;  // this thread's move or pin
    wait_for_owner(s);
    return true;
  }
  // Set the owner, then read the users (seq_cst): acquire() does the reverse.
  for (int round = 0; s.users.load(std::memory_order_seq_cst) != 0;) pause_a_little(round);
  if (s.fd.load(std::memory_order_seq_cst) == fd) {
    int saved = errno;
    move(s, fd);
    errno = saved;
  }
  s.owner.store(0, std::memory_order_release);
  return true;
}

void wait_for_held_of_others(unsigned first, unsigned last) {
  for (int k = 0; k < kSlots; k++) {
    Slot& s = g_slots[k];
    for (int round = 0;; pause_a_little(round)) {
      int fd = s.fd.load(std::memory_order_acquire);
      if (fd < 0 || static_cast<unsigned>(fd) < first || static_cast<unsigned>(fd) > last || (t_mine & bit(k)) ||
          s.kind.load(std::memory_order_acquire) != kHeld)
        break;
    }
  }
}

void unpin(uint32_t pinned) {
  for (int k = 0; k < kSlots; k++)
    if (pinned & bit(k)) g_slots[k].owner.store(0, std::memory_order_release);
}

// Frees a kept slot once no move, pin or use of it is in progress, closing its
// number first when `close_number` (and the number is still registered meanwhile).
void free_kept(int kept, bool close_number) {
  int saved = errno;
  Slot& s = g_slots[kept];
  for (int round = 0; !take_ownership(s);) pause_a_little(round);
  for (int round = 0; s.users.load(std::memory_order_seq_cst) != 0;) pause_a_little(round);
  int fd = s.fd.load(std::memory_order_relaxed);
  if (fd >= 0) {
    if (close_number) raw_close(fd);
    unpublish(s, fd);
  }
  s.owner.store(0, std::memory_order_release);
  free_slot(kept);
  errno = saved;
}

}  // namespace

int open_held(int dir, const char* path, int flags, mode_t mode) {
  int k = hold_new([&] { return openat(dir, path, flags | O_CLOEXEC, mode); },
                   [&](int fd) {
                     struct stat named;
                     int follow = flags & O_NOFOLLOW ? AT_SYMLINK_NOFOLLOW : 0;
                     return fstatat(dir, path, &named, follow) == 0 && same_inode(fd, named);
                   });
  return k < 0 ? -1 : g_slots[k].fd.load(std::memory_order_relaxed);
}

void close_held(int fd) {
  int saved = errno;
  for (int k = 0; k < kSlots; k++) {
    Slot& s = g_slots[k];
    if (!(t_mine & bit(k)) || s.fd.load(std::memory_order_relaxed) != fd) continue;
    raw_close(fd);  // still registered: a program's call on the number waits until it is unregistered
    t_mine &= ~bit(k);
    unpublish(s, fd);
    free_slot(k);
    errno = saved;
    return;
  }
  raw_close(fd);
  errno = saved;
}

std::string read_held_file(const char* path) {
  std::string out;
  HeldFile file(path, O_RDONLY);
  if (file.fd() < 0) return out;
  char buf[4096];
  ssize_t n;
  while ((n = read(file.fd(), buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

int keep(int held_fd) {
  struct stat original;
  int k = fstat(held_fd, &original) == 0
              ? hold_new([held_fd] { return duplicate_high(held_fd, high_base()); },
                         [&original](int copy) { return same_inode(copy, original); })
              : -1;
  int error = errno;
  close_held(held_fd);
  if (k < 0) return errno = error, -1;
  g_slots[k].kind.store(kKept, std::memory_order_release);
  t_mine &= ~bit(k);
  return k;
}

int adopt(int fd, ino_t inode) {
  auto is_it = [inode](int number) {
    struct stat st;
    return fstat(number, &st) == 0 && st.st_ino == inode;
  };
  // Checked now, and again if a program call may have closed the number meanwhile.
  if (!is_it(fd)) return errno = EBADF, -1;
  int k = hold_new([fd] { return fd; }, is_it);
  if (k < 0) return -1;
  g_slots[k].inherited.store(true, std::memory_order_relaxed);
  g_slots[k].kind.store(kKept, std::memory_order_release);
  t_mine &= ~bit(k);
  return k;
}

int hold_made(const Maker& maker) {
  int k = hold_new([&maker] { return maker.make(maker.context); },
                   [&maker](int fd) { return maker.same(fd, maker.context); });
  return k < 0 ? -1 : g_slots[k].fd.load(std::memory_order_relaxed);
}

bool hold_socket_pair(int out[2]) {
  int first = claim_slot(), second = first < 0 ? -1 : claim_slot();
  if (second < 0) {
    if (first >= 0) free_slot(first);
    errno = EMFILE;
    return false;
  }
  int error = EAGAIN;
  for (int attempt = 0; attempt < 3; attempt++) {
    Snapshot before = take_snapshot();
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
      error = errno;
      break;
    }
    publish(g_slots[first], pair[0]);
    publish(g_slots[second], pair[1]);
    t_mine |= bit(first) | bit(second);
    // Nothing tells these sockets from others: when a program call may have closed one
    // of the numbers meanwhile, both are forgotten, neither closed (they may be the
    // program's now).
    auto unproven = [](int) { return false; };
    if (proven_ours(before, pair[0], unproven) && proven_ours(before, pair[1], unproven)) {
      out[0] = pair[0], out[1] = pair[1];
      return true;
    }
    t_mine &= ~(bit(first) | bit(second));
    unpublish(g_slots[first], pair[0]);
    unpublish(g_slots[second], pair[1]);
  }
  free_slot(first);
  free_slot(second);
  errno = error;
  return false;
}

int acquire(int kept) {
  Slot& s = g_slots[kept];
  for (int round = 0;; pause_a_little(round)) {
    // Add a user, then read the owner (seq_cst): take_away() does the reverse.
    s.users.fetch_add(1, std::memory_order_seq_cst);
    uintptr_t owner = s.owner.load(std::memory_order_seq_cst);
    if (owner == 0 || owner == self()) break;  // (this thread's own move or pin, interrupted)
    s.users.fetch_sub(1, std::memory_order_release);
  }
  if (s.lost.load(std::memory_order_relaxed)) {
    s.users.fetch_sub(1, std::memory_order_release);
    return -1;
  }
  t_mine |= bit(kept);
  return s.fd.load(std::memory_order_seq_cst);
}

void release(int kept) {
  t_mine &= ~bit(kept);
  g_slots[kept].users.fetch_sub(1, std::memory_order_release);
}

void close_kept(int kept) { free_kept(kept, true); }

void forget_kept(int kept) { free_kept(kept, false); }

void after_fork_in_child() {
  int saved = errno;
  for (Bucket* b = g_buckets; b != g_buckets + kBuckets; b++) {
    b->registered.store(0, std::memory_order_relaxed);
    b->calls_finished.store(b->calls_started.load(std::memory_order_relaxed), std::memory_order_relaxed);
    b->stuck.store(0, std::memory_order_relaxed);
  }
  g_ranges.calls_finished.store(g_ranges.calls_started.load(std::memory_order_relaxed), std::memory_order_relaxed);
  g_ranges.stuck.store(0, std::memory_order_relaxed);
  for (int k = 0; k < kSlots; k++) {
    Slot& s = g_slots[k];
    if (!s.taken.load(std::memory_order_relaxed)) continue;
    int fd = s.fd.load(std::memory_order_relaxed);
    bool kept = s.kind.load(std::memory_order_relaxed) == kKept;
    // A child made without fork() may have closed the number before the agent
    // followed it: only the file registered is the agent's.
    struct stat st;
    bool ours = fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == s.device && st.st_ino == s.inode;
    if (kept || (t_mine & bit(k))) {
      s.users.store((t_mine & bit(k)) && kept ? 1 : 0, std::memory_order_relaxed);
      if (s.owner.load(std::memory_order_relaxed) != self()) s.owner.store(0, std::memory_order_relaxed);
      if (ours) {
        bucket_of(static_cast<unsigned>(fd)).registered.fetch_add(1, std::memory_order_relaxed);
      } else {
        s.fd.store(-1, std::memory_order_relaxed);
        if (kept) s.lost.store(true, std::memory_order_relaxed);
      }
      continue;
    }
    // Held by a thread that did not come along (or claimed, not registered yet).
    if (ours) raw_close(fd);
    s.fd.store(-1, std::memory_order_relaxed);
    free_slot(k);
  }
  g_pid.store(getpid(), std::memory_order_relaxed);
  errno = saved;
}

bool begin_replacing_slow(int fd) {
  Bucket& b = bucket_of(static_cast<unsigned>(fd));
  for (;;) {
    int k = slot_of(fd);
    // (A child sharing this memory but not the descriptor table: its numbers are its own.)
    if (k < 0 || getpid() != g_pid.load(std::memory_order_relaxed)) return true;
    end_replacing(fd);  // withdrawn while it waits or moves the number away
    if (!take_away(k, fd)) return false;
    b.calls_started.fetch_add(1, std::memory_order_seq_cst);
    if (b.registered.load(std::memory_order_seq_cst) == 0) return true;
  }
}

void begin_range(unsigned first, unsigned last, RangePlan* plan) {
  // (A child sharing this memory but not the descriptor table: its numbers are its own.)
  bool other_process = getpid() != g_pid.load(std::memory_order_relaxed);
  for (int round = 0;; pause_a_little(round)) {
    if (!other_process) wait_for_held_of_others(first, last);
    g_ranges.calls_started.fetch_add(1, std::memory_order_seq_cst);
    unsigned excluded[kSlots];
    size_t count = 0;
    uint32_t pinned = 0;
    bool blocked = false;
    for (int k = 0; k < kSlots && !blocked && !other_process; k++) {
      Slot& s = g_slots[k];
      int fd = s.fd.load(std::memory_order_seq_cst);
      if (fd < 0 || static_cast<unsigned>(fd) < first || static_cast<unsigned>(fd) > last) continue;
      if (t_mine & bit(k) || s.owner.load(std::memory_order_relaxed) == self()) {
        excluded[count++] = static_cast<unsigned>(fd);  // this thread's, interrupted by a signal handler
      } else if (s.kind.load(std::memory_order_acquire) == kHeld || !take_ownership(s)) {
        blocked = true;  // held by another thread since, or being moved or closed
      } else if (s.fd.load(std::memory_order_seq_cst) != fd) {
        s.owner.store(0, std::memory_order_release);
        blocked = true;
      } else {
        pinned |= bit(k);
        excluded[count++] = static_cast<unsigned>(fd);
      }
    }
    if (blocked) {
      unpin(pinned);
      g_ranges.calls_finished.fetch_add(1, std::memory_order_release);
      continue;
    }
    plan->count = range_parts(first, last, {excluded, count}, plan->parts);
    plan->pinned = pinned;
    return;
  }
}

void end_range(const RangePlan& plan) {
  unpin(plan.pinned);
  g_ranges.calls_finished.fetch_add(1, std::memory_order_release);
}

}  // namespace nmprof::own_descriptors
