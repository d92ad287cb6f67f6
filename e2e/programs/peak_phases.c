// A run whose live memory peaks in its middle: it fills a cache (site_cache, BLOCKS
// blocks of 4 KiB) while decoding with libpeak_codec.so (temporary buffers), holds the
// cache a while, frees it, then keeps a small leak (site_leak, BLOCKS / 16 blocks of
// 1 KiB) to the end.
//   peak_phases BLOCKS
// Prints when the cache was complete and when it was freed (ns since the epoch).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kCacheBlock = 4096, kLeakBlock = 1024, kDecoded = 65536 };

void codec_decode(size_t size);

static int64_t now(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void pause_ms(long ms) {
  struct timespec t = {0, ms * 1000000};
  nanosleep(&t, NULL);
}

// Each stores what it allocated, so that the call to malloc is not a tail call (the
// site stays on the stack).
__attribute__((noinline)) void site_cache(void** slot) { *slot = malloc(kCacheBlock); }
__attribute__((noinline)) void site_leak(void** slot) { *slot = malloc(kLeakBlock); }
__attribute__((noinline)) void load(void** cache, long blocks) {
  for (long i = 0; i < blocks; i++) {
    site_cache(&cache[i]);
    if (i % 8 == 0) codec_decode(kDecoded);
  }
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  long blocks = atol(argv[1]);
  void** cache = calloc((size_t)blocks, sizeof *cache);
  pause_ms(50);
  load(cache, blocks);
  int64_t complete = now();
  pause_ms(100);
  int64_t freed = now();
  for (long i = 0; i < blocks; i++) free(cache[i]);
  for (long i = 0; i < blocks / 16; i++) {
    site_leak(&cache[i]);  // kept to the end
    codec_decode(kDecoded);
  }
  pause_ms(50);
  printf("%lld %lld\n", (long long)complete, (long long)freed);
  return 0;
}
