// Prints what glibc's heap looks like after a fixed sequence of allocations: which
// large blocks glibc served by mmap, and its mallinfo2 counters. A profiler that
// allocates from the same heap changes this output: its frees of large blocks move
// glibc's dynamic mmap threshold, its small blocks change the arena's counters.
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int served_by_mmap(void* p) { return (((size_t*)p)[-1] & 2) != 0; }  // glibc's IS_MMAPPED bit

int main(void) {
  static void* blocks[4096];
  unsigned seed = 12345;
  for (int round = 0; round < 6; round++) {
    // Large blocks around the mmap threshold, which glibc raises after each free of a mapped one.
    for (int i = 0; i < 8; i++) {
      size_t size = (size_t)(96 + 40 * i + 16 * round) << 10;
      blocks[i] = malloc(size);
      memset(blocks[i], 1, size);
      putchar(served_by_mmap(blocks[i]) ? 'M' : 'h');
    }
    putchar('\n');
    for (int i = 0; i < 8; i++) free(blocks[i]);
    // Many small blocks, half of them freed.
    for (int i = 0; i < 4096; i++) {
      seed = seed * 1103515245 + 12345;
      blocks[i] = malloc(16 + (seed >> 16) % 2000);
    }
    for (int i = 0; i < 4096; i += 2) free(blocks[i]);
    for (int i = 1; i < 4096; i += 2) free(blocks[i]);
  }
  struct mallinfo2 m = mallinfo2();
  printf("arena %zu ordblks %zu hblks %zu hblkhd %zu uordblks %zu fordblks %zu keepcost %zu\n", m.arena, m.ordblks,
         m.hblks, m.hblkhd, m.uordblks, m.fordblks, m.keepcost);
  return 0;
}
