// The allocation functions of the test program, which fail on demand
// (failing_allocation.h); otherwise they are libc's (heap blocks come from glibc's
// own malloc, mappings from the system call).
#include "tests/agent/failing_allocation.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <new>

extern "C" void* __libc_malloc(size_t size);
extern "C" void* __libc_calloc(size_t count, size_t size);

namespace nmprof::testing {
namespace {

constexpr int64_t kNever = -1;
std::atomic<int64_t> g_until_failure{kNever};
std::atomic<bool> g_failed{false};

bool allocation_fails() {
  int64_t left = g_until_failure.load(std::memory_order_relaxed);
  if (left == kNever) return false;
  if (left > 0) {
    g_until_failure.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  g_failed.store(true, std::memory_order_relaxed);
  return true;
}

}  // namespace

void fail_allocations_from(int64_t n) {
  g_failed.store(false);
  g_until_failure.store(n);
}

bool stop_failing_allocations() {
  g_until_failure.store(kNever);
  return g_failed.load();
}

}  // namespace nmprof::testing

using nmprof::testing::allocation_fails;

extern "C" {

void* mmap(void* address, size_t length, int protection, int flags, int fd, off_t offset) {
  // Only new memory: mappings of files are not what an address-space limit refuses first.
  if ((flags & MAP_ANONYMOUS) && allocation_fails()) {
    errno = ENOMEM;
    return MAP_FAILED;
  }
  long p = syscall(SYS_mmap, address, length, protection, flags, fd, offset);
  return p == -1 ? MAP_FAILED : reinterpret_cast<void*>(p);
}

void* malloc(size_t size) {
  if (allocation_fails()) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_malloc(size);
}

void* calloc(size_t count, size_t size) {
  if (allocation_fails()) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_calloc(count, size);
}

}  // extern "C"

// libstdc++'s operator new calls malloc, but through its own, unhooked path when it is
// linked statically: replaced here so that every std container sees the failures.
void* operator new(size_t size) {
  void* p = malloc(size ? size : 1);
  if (!p) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { free(p); }
void operator delete[](void* p) noexcept { free(p); }
void operator delete(void* p, size_t) noexcept { free(p); }
void operator delete[](void* p, size_t) noexcept { free(p); }
