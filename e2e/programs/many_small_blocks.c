// Holds COUNT blocks of 32 bytes at once (an ordinary program's half a million),
// frees them all, and ends with one block of 1 MiB live (site_kept).
//   many_small_blocks COUNT
#include <stdlib.h>

// Each stores what it allocated, so that the call to malloc is not a tail call (the
// site stays on the stack).
__attribute__((noinline)) void site_small(void** slot) { *slot = malloc(32); }
__attribute__((noinline)) void site_kept(void** slot) { *slot = malloc(1 << 20); }

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  long count = atol(argv[1]);
  void** blocks = malloc((size_t)count * sizeof *blocks);
  if (!blocks) return 1;
  for (long i = 0; i < count; i++) site_small(&blocks[i]);
  for (long i = 0; i < count; i++) free(blocks[i]);
  free(blocks);
  static void* volatile kept;
  site_kept((void**)&kept);
  return 0;
}
