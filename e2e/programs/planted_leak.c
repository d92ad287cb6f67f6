// Leaks a known number of bytes, so that an estimate and its interval can be checked
// against the truth: SIZE bytes in blocks of 4 KiB kept to the end (site_leak), as
// many bytes again allocated and freed (site_churn), then HOLD_MS milliseconds of
// sleep with the leak live. Nothing else it allocates is left at its end.
//   planted_leak SIZE [HOLD_MS]     SIZE in bytes, or with k or m (KiB, MiB)
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kBlock = 4096 };

// Stores what it allocated, so that the call to malloc is not a tail call (the site
// stays on the stack).
__attribute__((noinline)) void site_leak(void** slot) { *slot = malloc(kBlock); }

__attribute__((noinline)) void site_churn(void) {
  void* p = malloc(kBlock);
  __asm__ volatile("" : : "r"(p) : "memory");
  free(p);
}

static long parse_size(const char* text) {
  char* end;
  long n = strtol(text, &end, 10);
  if (*end == 'k') n <<= 10;
  if (*end == 'm') n <<= 20;
  return n;
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: planted_leak SIZE [HOLD_MS]\n");
    return 2;
  }
  long blocks = parse_size(argv[1]) / kBlock;
  long hold_ms = argc == 3 ? atol(argv[2]) : 0;
  void** kept = malloc(sizeof(void*) * (size_t)(blocks ? blocks : 1));
  for (long i = 0; i < blocks; i++) {
    site_leak(&kept[i]);
    site_churn();
  }
  struct timespec hold = {hold_ms / 1000, hold_ms % 1000 * 1000000};
  nanosleep(&hold, NULL);
  free(kept);  // only the blocks are left: exactly SIZE bytes
  return 0;
}
