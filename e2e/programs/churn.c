// A deterministic allocation workload for the coexistence tests: malloc, calloc,
// realloc and free of many sizes on a few threads, with a checksum of the contents,
// so that a run under another allocator or profiler can be compared with a plain one.
//   churn [threads] [rounds] [library]    (library: dlopen'd first, e.g. a second profiler)
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 256

static long rounds = 20000;

static void* work(void* arg) {
  uint64_t seed = (uintptr_t)arg * 2654435761u + 1;
  uint64_t checksum = 0;
  unsigned char* slots[SLOTS] = {0};
  size_t sizes[SLOTS] = {0};
  for (long i = 0; i < rounds; i++) {
    seed = seed * 6364136223846793005u + 1442695040888963407u;
    size_t slot = (seed >> 33) % SLOTS;
    size_t size = 1 + (seed >> 40) % ((seed & 1) ? 64 : 16384);
    if (slots[slot] && (seed & 6) == 0) {
      unsigned char* grown = realloc(slots[slot], size);
      if (!grown) abort();
      if (size > sizes[slot]) memset(grown + sizes[slot], (int)size, size - sizes[slot]);
      slots[slot] = grown;
    } else {
      free(slots[slot]);
      slots[slot] = (seed & 8) ? calloc(1, size) : malloc(size);
      if (!slots[slot]) abort();
      memset(slots[slot], (int)size, size);
    }
    sizes[slot] = size;
    checksum = checksum * 31 + slots[slot][size - 1] + size;
  }
  for (size_t s = 0; s < SLOTS; s++) free(slots[s]);
  return (void*)(uintptr_t)checksum;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 4;
  if (argc > 2) rounds = atol(argv[2]);
  pthread_t ids[64];
  if (threads < 1 || threads > 64) return 2;
  if (argc > 3 && !dlopen(argv[3], RTLD_NOW)) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  for (int t = 0; t < threads; t++) pthread_create(&ids[t], NULL, work, (void*)(uintptr_t)(t + 1));
  for (int t = 0; t < threads; t++) {
    void* checksum;
    pthread_join(ids[t], &checksum);
    printf("thread %d checksum %lx\n", t, (unsigned long)(uintptr_t)checksum);
  }
  return 0;
}
