#include "agent/safety/unforked_child.h"

#include <sys/mman.h>
#include <unistd.h>

#include <new>

namespace nmprof::unforked_child {

std::atomic<uint32_t>* g_mark = nullptr;

bool watch() {
  if (g_mark) return true;
  long page = sysconf(_SC_PAGESIZE);
  void* p = mmap(nullptr, static_cast<size_t>(page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  if (madvise(p, static_cast<size_t>(page), MADV_WIPEONFORK) != 0) {
    munmap(p, static_cast<size_t>(page));
    return false;
  }
  auto* mark = new (p) std::atomic<uint32_t>(kFollowed);
  g_mark = mark;
  return true;
}

bool claim() {
  uint32_t unfollowed = kUnfollowed;
  return g_mark->compare_exchange_strong(unfollowed, kFollowing, std::memory_order_acq_rel);
}

void mark_followed() {
  if (g_mark) g_mark->store(kFollowed, std::memory_order_release);
}

}  // namespace nmprof::unforked_child
