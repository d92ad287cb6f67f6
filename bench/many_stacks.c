// Allocations from many distinct stacks, for the flame graph page's benchmark
// (bench/flame_graph_page.py): stack i descends through `left` or `right` by the bits
// of i, so STACKS stacks of about log2(STACKS) frames share their roots as a real
// program's do. Each round allocates once from every stack (64 B - 4 KiB), each block
// living two rounds; in the first half of the rounds every third stack also holds a
// block until three quarters of the run, so live memory peaks in the middle.
//   many_stacks STACKS ROUNDS
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void** slots;  // two per stack: the blocks of the last two rounds
static void** held;   // blocks held until three quarters of the run
static long held_count;

static void descend(long i, int level, long round);

__attribute__((noinline)) void left(long i, int level, long round) {
  descend(i, level, round);
  __asm__ volatile("");  // not a tail call: the frame stays on the stack
}

__attribute__((noinline)) void right(long i, int level, long round) {
  descend(i, level, round);
  __asm__ volatile("");
}

__attribute__((noinline)) void leaf(long i, long round, int hold) {
  uint64_t x = (uint64_t)(i + round) * 0x9E3779B97F4A7C15ull;
  long slot = i * 2 + (round & 1);
  free(slots[slot]);
  slots[slot] = malloc(64 + (x >> 40) % 4033);
  if (hold) held[held_count++] = malloc(64 + (x >> 20) % 4033);
}

static void descend(long i, int level, long round) {
  if (level < 0) {
    leaf(i, round, 0);
    return;
  }
  if ((i >> level) & 1)
    right(i, level - 1, round);
  else
    left(i, level - 1, round);
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  long stacks = atol(argv[1]), rounds = atol(argv[2]);
  int levels = 0;
  while ((1L << levels) < stacks) levels++;
  slots = calloc((size_t)stacks * 2, sizeof *slots);
  held = calloc((size_t)(stacks * rounds / 2 + 1), sizeof *held);
  for (long r = 0; r < rounds; r++) {
    for (long i = 0; i < stacks; i++) {
      if (r < rounds / 2 && i % 3 == 0)
        leaf(i, r, 1);
      else
        descend(i, levels - 1, r);
    }
    if (r == rounds * 3 / 4)
      while (held_count > 0) free(held[--held_count]);
  }
  printf("%ld\n", stacks);
  return 0;
}
