#include "attach/ptrace/known_functions.h"

#include <algorithm>

namespace nmprof::attach {
namespace {

// Calls whose system call is idle (interrupted_syscall.h) and that keep no lock of
// the C library across it, and the clock's. stdio (fgets, getchar) is not among
// them: it holds the stream's lock while it reads.
constexpr std::string_view kLocklessCalls[] = {
    "read", "readv", "recv", "recvfrom", "recvmsg", "recvmmsg", "accept", "accept4", "write", "writev",
    "epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect", "nanosleep",
    "clock_nanosleep", "sleep", "usleep", "pause", "sigsuspend", "sigwait", "sigwaitinfo", "sigtimedwait", "wait",
    "waitpid", "wait3", "wait4", "waitid", "semop", "semtimedop", "syscall", "pthread_cond_wait",
    "pthread_cond_timedwait", "pthread_cond_clockwait", "pthread_join", "pthread_timedjoin_np",
    "pthread_clockjoin_np", "pthread_mutex_lock", "pthread_mutex_timedlock", "pthread_mutex_clocklock",
    "pthread_rwlock_rdlock", "pthread_rwlock_wrlock", "pthread_rwlock_timedrdlock", "pthread_rwlock_timedwrlock",
    "pthread_barrier_wait", "sem_wait", "sem_timedwait", "sem_clockwait", "clock_gettime", "clock_getres",
    "gettimeofday", "time", "getcpu", "sched_getcpu"};

constexpr std::string_view kEntryFunctions[] = {"start_thread", "clone", "clone3", "libc_start_main",
                                                "libc_start_call_main", "start"};

constexpr std::string_view kAllocatorFunctions[] = {
    "malloc", "free", "calloc", "realloc", "reallocarray", "memalign", "aligned_alloc", "posix_memalign",
    "valloc", "pvalloc", "cfree", "free_sized", "free_aligned_sized", "malloc_usable_size", "malloc_trim",
    "mallocx", "rallocx", "xallocx", "sallocx", "dallocx", "sdallocx", "nallocx", "mallctl"};

// Prefixes of allocators linked into a program, and of PHP's heap.
constexpr std::string_view kAllocatorPrefixes[] = {
    "je_", "tc_", "mi_", "_mi_", "zend_mm_", "_zend_mm_", "_emalloc", "_efree", "_erealloc", "_ecalloc",
    "_safe_emalloc", "_safe_erealloc"};

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// __GI___read, __libc_read, __read, ___pthread_cond_wait, __vdso_time: read,
// pthread_cond_wait, time.
std::string_view public_name(std::string_view name) {
  if (starts_with(name, "__GI_")) name.remove_prefix(5);
  while (starts_with(name, "_")) name.remove_prefix(1);
  if (starts_with(name, "libc_") && !starts_with(name, "libc_start_")) name.remove_prefix(5);
  if (starts_with(name, "vdso_")) name.remove_prefix(5);
  return name;
}

template <size_t N>
bool listed(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

}  // namespace

bool is_lockless_call(std::string_view name) { return listed(kLocklessCalls, public_name(name)); }

bool is_entry_function(std::string_view name) { return listed(kEntryFunctions, public_name(name)); }

bool is_allocator_function(std::string_view name) {
  if (listed(kAllocatorFunctions, public_name(name))) return true;
  return std::any_of(std::begin(kAllocatorPrefixes), std::end(kAllocatorPrefixes),
                     [name](std::string_view prefix) { return starts_with(name, prefix); });
}

}  // namespace nmprof::attach
