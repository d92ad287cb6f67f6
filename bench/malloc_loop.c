// The tight allocation loop of the benchmarks: malloc and free of random sizes
// (16 B - 4 KiB) with a few blocks kept live, on one or more threads.
//   malloc_loop THREADS PAIRS_PER_THREAD [context]
// With "context", each thread sets a new nmprof.h context (span ids and a route)
// every 100 allocations, as a server would per request. Prints the wall time in seconds.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nmprof.h"

static long pairs;
static int with_context;
static const char* const kRoutes[] = {"/checkout", "/search", "/static", "/login"};

static void* loop(void* arg) {
  uint64_t x = 0x9E3779B97F4A7C15ull ^ (uintptr_t)arg;
  void* slots[64] = {0};
  for (long i = 0; i < pairs; i++) {
    if (with_context && i % 100 == 0) {
      nmprof_context_set((uint64_t)i + 1, (uint64_t)i / 1000 + 1);
      nmprof_context_set_attribute("route", kRoutes[(i / 100) & 3]);
    }
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    size_t size = 16 + (x % 4081);
    unsigned slot = (x >> 20) & 63;
    free(slots[slot]);
    slots[slot] = malloc(size);
  }
  for (int i = 0; i < 64; i++) free(slots[i]);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 3 && !(argc == 4 && strcmp(argv[3], "context") == 0)) return 2;
  int threads = atoi(argv[1]);
  pairs = atol(argv[2]);
  with_context = argc == 4;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  pthread_t t[64];
  for (long i = 0; i < threads; i++) pthread_create(&t[i], NULL, loop, (void*)i);
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.6f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
  return 0;
}
