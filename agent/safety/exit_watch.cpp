#include "agent/safety/exit_watch.h"

#include <linux/capability.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "agent/safety/bare_task.h"
#include "agent/safety/own_descriptors.h"
#include "agent/safety/spin_lock.h"
#include "common/exit_watch_lock.h"

namespace nmprof::exit_watch {
namespace {

constexpr size_t kStackBytes = 512 * 1024;    // the last write names frames, as the writer thread does
constexpr size_t kLauncherStack = 16 * 1024;  // the bottom of the mapping: the short-lived middle clone's
constexpr int kPollSeconds = 1;               // how soon it sees that it is no longer wanted, or an exec
constexpr unsigned kLastWriteSeconds = 10;    // then SIGALRM ends it (a lock a dead thread held)

using bare_task::call;

enum State { kNone, kStarting, kWatching, kGone };

// What the watch reads from the memory it shares with the program.
struct Watch {
  std::atomic<int> state{kNone};
  std::atomic<bool> ending{false};  // the program ended its recording itself
  int program = 0;                  // the program's pid
  int file = -1;                    // the watch's own description of the recording
  uintptr_t thread_pointer = 0;     // whose TLS the last write uses
  void (*at_death)(int file) = nullptr;
  char* stack = nullptr;  // a fork child's copy serves its own watch
};
Watch g_watch;
SpinLock g_lock;  // start() one at a time

[[noreturn]] void leave() {
  g_watch.state.store(kGone, std::memory_order_release);
  for (;;) call(SYS_exit_group, 0);
}

// Keeps only descriptors a and b of the table the clone copied: the watch holds
// nothing of the program's (a pipe it kept open would hold back its reader's end of
// file, a listening socket its port, the recording's first description its flock).
bool close_all_but(int a, int b) {
  int low = a < b ? a : b, high = a < b ? b : a;
  auto close_range = [](long first, long last) { return first > last || call(SYS_close_range, first, last, 0) == 0; };
  return close_range(0, low - 1) && close_range(low + 1, high - 1) && close_range(high + 1, ~0u);
}

// The program left without ending its recording: its last write, on the TLS of a
// thread that is gone like every other, with a deadline.
[[noreturn]] void write_for_the_dead() {
  bare_task::set_thread_pointer(g_watch.thread_pointer);
  struct kernel_sigaction {
    void* handler;
    unsigned long flags;
    void* restorer;
    uint64_t mask;
  } default_action = {};
  call(SYS_rt_sigaction, SIGALRM, reinterpret_cast<long>(&default_action), 0, sizeof(uint64_t));
  uint64_t alarm_only = uint64_t{1} << (SIGALRM - 1);
  call(SYS_rt_sigprocmask, SIG_UNBLOCK, reinterpret_cast<long>(&alarm_only), 0, sizeof(uint64_t));
  struct itimerval deadline = {{0, 0}, {kLastWriteSeconds, 0}};
  call(SYS_setitimer, ITIMER_REAL, reinterpret_cast<long>(&deadline), 0);
  g_watch.at_death(g_watch.file);
  leave();
}

int watch_main(void*) {
  // Its memory is the program's: a crash of the watch must not dump it as a core.
  struct rlimit no_core = {0, 0};
  call(SYS_prlimit64, 0, RLIMIT_CORE, reinterpret_cast<long>(&no_core), 0);
  call(SYS_prctl, PR_SET_NAME, reinterpret_cast<long>("nmprof watch"));
  // Out of the program's process group and session (a job's group lives no longer
  // than its processes; a stop of the group does not stop the watch), and out of its
  // working directory (which it would keep from being unmounted).
  call(SYS_setsid);
  call(SYS_chdir, reinterpret_cast<long>("/"));
  int program = g_watch.program, self = static_cast<int>(call(SYS_getpid));
  long pidfd = call(SYS_pidfd_open, program, 0);
  // The pid is the program's while it shares this memory: then the pidfd names it.
  if (pidfd < 0 || call(SYS_kcmp, program, self, KCMP_VM, 0, 0) != 0) leave();
  if (!close_all_but(static_cast<int>(pidfd), g_watch.file)) leave();
  g_watch.state.store(kWatching, std::memory_order_release);
  for (;;) {
    struct pollfd gone = {static_cast<int>(pidfd), POLLIN, 0};
    struct timespec wait = {kPollSeconds, 0};
    long ready = call(SYS_ppoll, reinterpret_cast<long>(&gone), 1, reinterpret_cast<long>(&wait), 0, 0);
    if (g_watch.ending.load(std::memory_order_acquire)) leave();
    if (ready == 1) write_for_the_dead();
    if (ready != 0) leave();
    // The program exec'd without the agent's hooks seeing it (a raw execve): its new
    // image has memory of its own, and this one's recording is not written after it.
    if (call(SYS_kcmp, program, self, KCMP_VM, 0, 0) != 0) leave();
  }
}

// The middle clone starts the watch and leaves at once: the watch, orphaned, belongs
// to init (or a subreaper) from its start, so that neither the program nor its parent
// ever has it as a child to wait for (a program that waits for every child of its
// with __WALL, as strace does, would wait for it forever).
int launch_main(void*) {
  if (clone(watch_main, g_watch.stack + kStackBytes, CLONE_VM | CLONE_UNTRACED, nullptr) < 0)
    g_watch.state.store(kGone, std::memory_order_release);
  return 0;
}

// Starts the clones with every signal blocked from their first instruction (they get
// this thread's mask: the program's handlers must never run in them), and waits until
// the watch has taken what it keeps of the descriptor table.
void launch() {
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  int launcher = clone(launch_main, g_watch.stack + kLauncherStack, CLONE_VM | CLONE_UNTRACED, nullptr);
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (launcher <= 0) {
    g_watch.state.store(kGone, std::memory_order_relaxed);
    return;
  }
  siginfo_t info;
  while (waitid(P_PID, static_cast<id_t>(launcher), &info, WEXITED | __WCLONE) != 0 && errno == EINTR) {
  }
  for (int waited = 0; g_watch.state.load(std::memory_order_acquire) == kStarting && waited < 1000; waited++) {
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, nullptr);
  }
}

}  // namespace

void remember_thread() { g_watch.thread_pointer = bare_task::thread_pointer(); }

bool start(int file, void (*at_death)(int file)) {
  int self = this_thread_id();
  g_lock.lock(self);
  int error = errno;
  int state = g_watch.state.load(std::memory_order_acquire);
  // A watch that left without being asked (no pidfd, kcmp refused) would leave again.
  bool startable = (state == kNone || (state == kGone && g_watch.ending.load(std::memory_order_relaxed))) &&
                   g_watch.thread_pointer && getpid() != 1;
  // A watch of this process ran on the stack (and may be in its last instruction): a new one.
  if (startable && state == kGone) g_watch.stack = nullptr;
  if (startable && !g_watch.stack) {
    void* stack = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
    g_watch.stack = stack == MAP_FAILED ? nullptr : static_cast<char*>(stack);
  }
  if (startable && g_watch.stack && exit_watch_lock::take(file)) {
    g_watch.state.store(kStarting, std::memory_order_relaxed);
    g_watch.ending.store(false, std::memory_order_relaxed);
    g_watch.program = static_cast<int>(getpid());
    g_watch.file = file;
    g_watch.at_death = at_death;
    launch();
  }
  own_descriptors::close_held(file);  // the watch has its own copy
  errno = error;
  g_lock.unlock();
  return running();
}

bool holds_privileges() {
  uid_t uid, euid, suid;
  gid_t gid, egid, sgid;
  if (getresuid(&uid, &euid, &suid) != 0 || getresgid(&gid, &egid, &sgid) != 0) return true;
  if (euid == 0 || uid != euid || suid != euid || gid != egid || sgid != egid) return true;
  __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return true;
  return (data[0].effective | data[0].permitted | data[1].effective | data[1].permitted) != 0;
}

bool running() { return g_watch.state.load(std::memory_order_acquire) == kWatching; }

void end() { g_watch.ending.store(true, std::memory_order_release); }

void forget_after_fork() {
  // The parent's watch watches the parent; the mapping of its stack is this
  // process's own copy, for the child's watch.
  g_watch.state.store(kNone, std::memory_order_relaxed);
  g_watch.ending.store(false, std::memory_order_relaxed);
  g_lock.unlock();
  remember_thread();
}

}  // namespace nmprof::exit_watch
