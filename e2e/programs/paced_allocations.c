// Allocates at a steady pace for a given time, so that a looping recording (--loop)
// cuts through it: a block at the start that is never freed (leak_at_start), then,
// every 10 ms, blocks of 4096 bytes allocated and freed at once (paced_site) and a
// block of 64 KiB held for 150 ticks, 1.5 s, then freed (held_site: freed in a later
// chunk than its own). Prints the bytes each site allocated, the truth the chunks are
// checked against.
//   paced_allocations SECONDS LEAK_BYTES
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kBlock = 4096, kBlocksPerTick = 100, kHeldBlock = 65536, kHeldTicks = 150 };

static void* kept;
static void* held[kHeldTicks];

__attribute__((noinline)) void leak_at_start(size_t size) {
  kept = malloc(size);
  __asm__ volatile("" : : "r"(kept) : "memory");
}

__attribute__((noinline)) void paced_site(void) {
  void* p = malloc(kBlock);
  __asm__ volatile("" : : "r"(p) : "memory");
  free(p);
}

__attribute__((noinline)) void held_site(long tick) {
  free(held[tick % kHeldTicks]);
  held[tick % kHeldTicks] = malloc(kHeldBlock);
  __asm__ volatile("" : : "r"(held[tick % kHeldTicks]) : "memory");
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
  long ticks = 0;
  struct timespec tick = {0, 10 * 1000 * 1000};
  for (double end = now() + seconds; now() < end; ticks++) {
    for (int i = 0; i < kBlocksPerTick; i++) paced_site();
    held_site(ticks);
    nanosleep(&tick, NULL);
  }
  printf("leak_at_start %zu\npaced_site %ld\nheld_site %ld\n", leak, ticks * kBlocksPerTick * kBlock,
         ticks * kHeldBlock);
  return 0;
}
