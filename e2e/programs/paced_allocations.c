// Allocates at a steady pace for a given time, so that a looping recording (--loop)
// cuts through it: a block at the start that is never freed (leak_at_start), then,
// every 10 ms, blocks of 4096 bytes allocated and freed at once (paced_site). Prints
// the bytes each site allocated, the truth the chunks are checked against.
//   paced_allocations SECONDS LEAK_BYTES
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kBlock = 4096, kBlocksPerTick = 100 };

static void* kept;

__attribute__((noinline)) void leak_at_start(size_t size) {
  kept = malloc(size);
  __asm__ volatile("" : : "r"(kept) : "memory");
}

__attribute__((noinline)) void paced_site(void) {
  void* p = malloc(kBlock);
  __asm__ volatile("" : : "r"(p) : "memory");
  free(p);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  double seconds = atof(argv[1]);
  size_t leak = (size_t)atol(argv[2]);
  leak_at_start(leak);
  long blocks = 0;
  struct timespec tick = {0, 10 * 1000 * 1000};
  for (double end = now() + seconds; now() < end; blocks += kBlocksPerTick) {
    for (int i = 0; i < kBlocksPerTick; i++) paced_site();
    nanosleep(&tick, NULL);
  }
  printf("leak_at_start %zu\npaced_site %ld\n", leak, blocks * kBlock);
  return 0;
}
