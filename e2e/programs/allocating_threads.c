// Eight threads (main included) that allocate as fast as they can, for nmprof attach
// into a process whose every thread is in its allocator most of the time (run under
// LD_PRELOAD of jemalloc, tcmalloc or mimalloc). Blocks of many sizes, some freed by
// another thread than the one that allocated them. Prints "ready", then "ok ROUNDS"
// once STOPFILE exists; exit 0 = every block held what was written into it.
//   allocating_threads STOPFILE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kThreads = 8, kKept = 256, kShared = 64 };

static const char* stop_file;
static atomic_int stopping;
static atomic_int corrupt;
static _Atomic(unsigned char*) shared[kShared];  // handed from thread to thread

static size_t size_for(uint64_t r) {
  switch (r % 16) {
    case 0: return 64 * 1024 + r % 4096;          // large
    case 1: return 1024 * 1024 + r % 65536;       // mmap'd by most allocators
    default: return 8 + r % 2048;                  // small
  }
}

static unsigned char* filled(size_t size, unsigned char mark) {
  unsigned char* p = malloc(size);
  if (p) {
    p[0] = mark;
    p[size - 1] = mark;
  }
  return p;
}

static void* allocate(void* arg) {
  uintptr_t id = (uintptr_t)arg;
  unsigned char* kept[kKept] = {0};
  size_t kept_size[kKept] = {0};
  uint64_t r = 0x9e3779b97f4a7c15ull * (id + 1);
  unsigned long rounds = 0;
  for (; !atomic_load_explicit(&stopping, memory_order_relaxed); rounds++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    unsigned slot = (unsigned)(r >> 8) % kKept;
    if (kept[slot] && (kept[slot][0] != (unsigned char)slot || kept[slot][kept_size[slot] - 1] != (unsigned char)slot))
      atomic_store(&corrupt, 1);
    if (r & 1) {
      unsigned char* bigger = realloc(kept[slot], kept_size[slot] + 16);
      if (bigger) {
        kept[slot] = bigger;
        kept_size[slot] += 16;
        bigger[0] = bigger[kept_size[slot] - 1] = (unsigned char)slot;
      }
    } else {
      free(kept[slot]);
      kept_size[slot] = size_for(r >> 16);
      kept[slot] = filled(kept_size[slot], (unsigned char)slot);
    }
    if ((r & 0x3) == 0) free(atomic_exchange(&shared[(r >> 24) % kShared], filled(size_for(r >> 32), 1)));
    if (id == 0 && rounds % 4096 == 0 && access(stop_file, F_OK) == 0) atomic_store(&stopping, 1);
  }
  for (unsigned i = 0; i < kKept; i++) free(kept[i]);
  return (void*)rounds;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  stop_file = argv[1];
  setvbuf(stdout, NULL, _IOLBF, 0);
  pthread_t threads[kThreads];
  for (uintptr_t i = 1; i < kThreads; i++) pthread_create(&threads[i], NULL, allocate, (void*)i);
  printf("ready\n");
  unsigned long rounds = (unsigned long)allocate(0);
  for (int i = 1; i < kThreads; i++) {
    void* more;
    pthread_join(threads[i], &more);
    rounds += (unsigned long)more;
  }
  for (int i = 0; i < kShared; i++) free(shared[i]);
  if (atomic_load(&corrupt)) {
    printf("corrupt\n");
    return 1;
  }
  printf("ok %lu\n", rounds);
  return 0;
}
