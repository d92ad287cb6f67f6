// The tight allocation loop of the benchmarks: malloc and free of random sizes
// (16 B - 4 KiB) with a few blocks kept live, on one or more threads.
//   malloc_loop THREADS PAIRS_PER_THREAD
// Prints the wall time in seconds.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long pairs;

static void* loop(void* arg) {
  uint64_t x = 0x9E3779B97F4A7C15ull ^ (uintptr_t)arg;
  void* slots[64] = {0};
  for (long i = 0; i < pairs; i++) {
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
  if (argc != 3) return 2;
  int threads = atoi(argv[1]);
  pairs = atol(argv[2]);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  pthread_t t[64];
  for (long i = 0; i < threads; i++) pthread_create(&t[i], NULL, loop, (void*)i);
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.6f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
  return 0;
}
