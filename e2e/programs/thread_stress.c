// Stress for the recorder: WORKERS threads at a time allocate, free and reallocate at
// three sites of fixed sizes for about SECONDS, while threads keep ending and new ones
// start; after each round of WORKERS thread starts, the main thread forks while the
// others run (the child allocates and ends by exit or _exit) and loads, calls and
// unloads PLUGIN. Prints its pid and the true count of each site:
//   thread_stress SECONDS WORKERS PLUGIN.so
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kOpsPerThread = 4000, kSlots = 32, kMaxWorkers = 64 };
enum { kMallocSize = 64, kCallocCount = 10, kCallocSize = 24, kReallocSize = 3000 };

// site_malloc, site_calloc, site_realloc's calls that grew their block, and the bytes
// they added as nmprof counts a realloc: the usable size it added, at most its size.
static long counts[4];

// The empty asm keeps each site's frame: no tail call into the allocator.
static inline void* kept(void* p) {
  __asm__ volatile("" : : "r"(p) : "memory");
  return p;
}
__attribute__((noinline)) void* site_malloc(void) { return kept(malloc(kMallocSize)); }
__attribute__((noinline)) void* site_calloc(void) { return kept(calloc(kCallocCount, kCallocSize)); }
__attribute__((noinline)) void* site_realloc(void* p) { return kept(realloc(p, kReallocSize)); }

static void* worker(void* arg) {
  uint64_t x = 0x9E3779B97F4A7C15ull ^ (uintptr_t)arg;
  void* slots[kSlots] = {0};
  long mine[4] = {0};
  for (int i = 0; i < kOpsPerThread; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    unsigned slot = x % kSlots;
    switch ((x >> 8) % 3) {
      case 0:
        free(slots[slot]);
        slots[slot] = site_malloc();
        mine[0]++;
        break;
      case 1:
        free(slots[slot]);
        slots[slot] = site_calloc();
        mine[1]++;
        break;
      default:
      {
        size_t before = malloc_usable_size(slots[slot]);
        slots[slot] = site_realloc(slots[slot]);
        size_t after = malloc_usable_size(slots[slot]);
        size_t added = after > before ? after - before : 0;
        if (added) {
          mine[2]++;
          mine[3] += added < kReallocSize ? added : kReallocSize;
        }
        break;
      }
    }
  }
  for (int i = 0; i < kSlots; i++) free(slots[i]);
  for (int k = 0; k < 4; k++) __atomic_fetch_add(&counts[k], mine[k], __ATOMIC_RELAXED);
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  double end = now() + atof(argv[1]);
  int workers = atoi(argv[2]);
  if (workers < 1 || workers > kMaxWorkers) return 2;
  pthread_t threads[kMaxWorkers];
  long started = 0, forks = 0;
  for (int i = 0; i < workers; i++) pthread_create(&threads[i], NULL, worker, (void*)started++);
  while (now() < end) {
    for (int i = 0; i < workers; i++) {  // each ends in turn and is replaced while the others run
      pthread_join(threads[i], NULL);
      pthread_create(&threads[i], NULL, worker, (void*)started++);
    }
    pid_t child = fork();
    if (child == 0) {
      for (int i = 0; i < 1000; i++) free(malloc(100));
      if (forks % 2) _exit(0);
      exit(0);
    }
    if (child > 0) waitpid(child, NULL, 0);
    forks++;
    void* plugin = dlopen(argv[3], RTLD_NOW);
    if (!plugin) return 3;
    void (*allocate)(void) = (void (*)(void))dlsym(plugin, "plugin_allocate");
    if (allocate) allocate();
    dlclose(plugin);
  }
  for (int i = 0; i < workers; i++) pthread_join(threads[i], NULL);
  printf("pid %d\nthreads %ld\nforks %ld\n", (int)getpid(), started, forks);
  printf("site_malloc %ld\nsite_calloc %ld\nsite_realloc %ld\nsite_realloc_bytes %ld\n", counts[0], counts[1], counts[2],
         counts[3]);
  return 0;
}
