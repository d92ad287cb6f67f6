// The descriptors the agent opens, kept safe from a program that closes or replaces
// numbers it does not own: daemons close every number from 3 on (one by one,
// close_range, closefrom) or dup2 /dev/null over them, from any thread, at any time.
// Unguarded, the agent then wrote, read or closed whatever the program had opened at
// that number since (its JFR chunk header landed at offset 0 of a program's file).
//
// Every descriptor of the agent's is in this registry from right after its open to
// its close; the close family's hooks (hooks/descriptor_hooks.h) ask it before the
// program's call goes through, so the program sees what it would see without
// nmprof: the number is free (close says EBADF, as for a number never opened), or
// replaced.
//  - A held descriptor (a /proc file, a symbol file, a directory safe_file works in,
//    the recording while it is being claimed) is opened, used for a few system calls
//    and closed by one agent thread. A program's call on its number waits until the
//    agent closed it.
//  - A kept descriptor (the recording's output) lives long, at a high number out of
//    the way of loops that close 3..1023. The agent uses it between acquire() and
//    release(). A program's close or dup2 on its number first moves it to another
//    number (F_DUPFD_CLOEXEC), after the agent's uses in progress; a close_range or
//    closefrom is split around it.
//
// The races, and why they cannot hurt (S is the single total order of the seq_cst
// operations):
//  - A program call that checked the registry before the agent registered a number
//    and makes its system call after (a close loop's close(3) while the agent's open
//    returns 3): each call announces itself (calls_started of the number's bucket,
//    seq_cst) before it looks at the registry, and counts itself done after its
//    system call. The agent registers (seq_cst), then reads calls_started. Either the
//    call's announcement comes first in S, and the agent sees it: it waits until the
//    calls in flight are done, then checks that the number is still the file it
//    opened (fstat against fstatat of the name) and else forgets the number without
//    closing it; or the registration comes first, and the call sees it.
//  - A move while the agent writes: acquire() adds itself to the users, then reads
//    the mover (both seq_cst); a move sets the mover, then reads the users (both
//    seq_cst). One of the two sees the other: the move waits for the users, or the
//    use waits for the move. The number is read after, and a move publishes the new
//    one before it lets go.
//  - The agent's own close: done while the number is still registered (a program call
//    on it waits), and the number is unregistered only after.
//  - A program call in a signal handler that interrupted the agent's own use of that
//    number cannot wait for it: it fails (close: EBADF, dup2: EBUSY), or leaves the
//    number out of its range.
//  - A program call cancelled (pthread_cancel) inside its system call never counts
//    itself done: the agent waits for it at most kStuckCallMillis once, forgets the
//    number it was registering (not closed: it may be the program's), and takes the
//    call for stuck from then on. (A call preempted for longer than that between its
//    look at the registry and its system call, that then closes a number the agent
//    registers later, is not seen: docs/limits.md.)
//
// What raw system calls (syscall(SYS_close)) can still do is in docs/limits.md:
// they bypass the hooks; the output is checked (fstat) before each use and reopened
// by path when it was lost.
#pragma once

#include <string>

#include <fcntl.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "agent/safety/range_parts.h"

namespace nmprof::own_descriptors {

constexpr int kSlots = 32;
constexpr int kBuckets = 16;  // program calls are counted per number % kBuckets
constexpr int kStuckCallMillis = 20;

// ---- The agent's side ----

// openat(2) (dir AT_FDCWD for a path; O_CLOEXEC is added), registered as held by the
// calling thread: a descriptor, or -1 with errno (EAGAIN: the program took the
// number under the open, three times running; EMFILE: no slot left).
int open_held(int dir, const char* path, int flags, mode_t mode = 0);
// Closes a descriptor open_held() gave (errno is kept); one that is not registered
// (made before set_descriptor_ops, in a test) is just closed.
void close_held(int fd);

// The whole of a small file (a /proc one), read through a held descriptor; empty
// when it cannot be read.
std::string read_held_file(const char* path);

// A held descriptor for the lifetime of the object.
class HeldFile {
 public:
  HeldFile(const char* path, int flags) : fd_(open_held(AT_FDCWD, path, flags)) {}
  ~HeldFile() {
    if (fd_ >= 0) close_held(fd_);
  }
  HeldFile(const HeldFile&) = delete;
  HeldFile& operator=(const HeldFile&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// Makes a held descriptor kept, at a high number (below RLIMIT_NOFILE's soft limit);
// the held one is closed either way. The kept descriptor's slot, or -1 with errno.
int keep(int held_fd);
// Makes a descriptor the process inherited (from nmprof run) kept, at its number,
// once it is proven to be the file `inode`; exec'd images inherit it too, wherever it
// moves. The kept descriptor's slot, or -1 with errno.
int adopt(int fd, ino_t inode);

// Registers, as held by the calling thread, the descriptor that maker.make() returns
// (one open_held cannot make: received from another process). same() says whether a
// number still is that descriptor, when a program call may have closed it meanwhile.
// The descriptor, or -1 with errno.
struct Maker {
  int (*make)(void* context);
  bool (*same)(int fd, void* context);
  void* context;
};
int hold_made(const Maker& maker);
// socketpair(AF_UNIX, SOCK_SEQPACKET) with both ends held by the calling thread
// (close_held each). False with errno (EAGAIN: a program call may have taken them).
bool hold_socket_pair(int out[2]);

// The kept descriptor's number, for the system calls until release(); -1 when it is
// lost (the program took its number and it could not be moved: reopen the file,
// then close_kept() the slot).
int acquire(int kept);
void release(int kept);
void close_kept(int kept);
// Frees the slot without closing the number: it is no longer the agent's file (a raw
// close(2) took it).
void forget_kept(int kept);

// fork() in the child (or a child made without it): what threads that did not come
// along held, used or were moving, and the program's calls they had in flight.
void after_fork_in_child();

// ---- The hooks' side ----

struct alignas(64) Bucket {
  std::atomic<uint64_t> calls_started{0};   // program calls that may close a number of this bucket
  std::atomic<uint64_t> calls_finished{0};
  std::atomic<uint32_t> registered{0};      // the agent's descriptors in this bucket
  std::atomic<uint64_t> stuck{0};           // calls that never finished (cancelled in their system call)
};
extern Bucket g_buckets[kBuckets];

inline Bucket& bucket_of(unsigned fd) { return g_buckets[fd % kBuckets]; }

bool begin_replacing_slow(int fd);

// Before a call that closes or replaces `fd` (close, dup2, dup3): true when the call
// may go through, announced (end_replacing() after it); false when it must fail with
// errno (a signal handler calling it on the number the agent uses in that thread).
// Two atomic additions and a compare when the number is not the agent's.
inline bool begin_replacing(int fd) {
  Bucket& b = bucket_of(static_cast<unsigned>(fd));
  b.calls_started.fetch_add(1, std::memory_order_seq_cst);
  if (__builtin_expect(b.registered.load(std::memory_order_seq_cst) == 0, 1)) return true;
  return begin_replacing_slow(fd);
}
inline void end_replacing(int fd) {
  bucket_of(static_cast<unsigned>(fd)).calls_finished.fetch_add(1, std::memory_order_release);
}

// The parts of [first, last] that close_range/closefrom may close: around the agent's
// kept descriptors (pinned where they are until end_range) and held ones of this
// thread; after the held ones of other threads in it were closed. Announced.
struct RangePlan {
  RangePart parts[kSlots + 1];
  size_t count = 0;
  uint32_t pinned = 0;  // kept slots
};
void begin_range(unsigned first, unsigned last, RangePlan* plan);
void end_range(const RangePlan& plan);

}  // namespace nmprof::own_descriptors
