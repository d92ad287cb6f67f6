// Runs into its address-space limit (ulimit -v, or RLIMIT_AS set by its parent):
// allocates blocks of BLOCK bytes until malloc returns NULL, frees them, then keeps
// 64 blocks of 64 KiB (4 MiB) live to its end. What it prints does not depend on
// how much it got, so that a run with nmprof prints what a plain run prints.
//   address_space_hog BLOCK [threaded]
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void* nothing(void* arg) { return arg; }

__attribute__((noinline)) void** until_null(size_t block, size_t* count) {
  size_t capacity = 1024;
  void** blocks = malloc(capacity * sizeof *blocks);
  if (!blocks) return NULL;
  for (*count = 0;; (*count)++) {
    if (*count == capacity) {
      void** more = realloc(blocks, 2 * capacity * sizeof *blocks);
      if (!more) break;
      blocks = more;
      capacity *= 2;
    }
    void* p = malloc(block);
    if (!p) break;
    memset(p, 1, block < 64 ? block : 64);
    blocks[*count] = p;
  }
  return blocks;
}

__attribute__((noinline)) void* kept_to_the_end(void) { return malloc(64 << 10); }

int main(int argc, char** argv) {
  size_t block = strtoul(argv[1], NULL, 0);
  if (argc > 2) {  // a second thread: the agent then writes from a thread of its own
    pthread_t t;
    pthread_create(&t, NULL, nothing, NULL);
    pthread_join(t, NULL);
  }
  size_t count = 0;
  void** blocks = until_null(block, &count);
  printf("malloc returned NULL: %s\n", blocks && count > 0 ? "yes" : "no");
  for (size_t i = 0; i < count; i++) free(blocks[i]);
  free(blocks);
  void* kept[64];
  int all = 1;
  for (int i = 0; i < 64; i++) all &= (kept[i] = kept_to_the_end()) != NULL;
  printf("kept 64 blocks of 64 KiB: %s\n", all ? "yes" : "no");
  return 0;
}
