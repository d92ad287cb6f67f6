// A thread grows one block by realloc, STEP bytes at a time, without end; main
// exits after SECONDS and prints the size the block had reached then (it only
// grows: the recording must hold at least that).
//   grow_until_exit SECONDS STEP
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static size_t step, reached;

static void* __attribute__((noinline)) grow_block(void* unused) {
  (void)unused;
  size_t size = 64 << 20;  // sampled, with a weight of 1, at an interval of 1 MiB or less
  char* block = malloc(size);
  if (!block) exit(1);
  for (;;) {
    char* grown = realloc(block, size + step);
    if (!grown) exit(1);
    block = grown;
    size += step;
    __atomic_store_n(&reached, size, __ATOMIC_RELEASE);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  step = strtoull(argv[2], NULL, 10);
  pthread_t grower;
  if (pthread_create(&grower, NULL, grow_block, NULL)) return 1;
  usleep((useconds_t)(atof(argv[1]) * 1e6));
  printf("%zu\n", __atomic_load_n(&reached, __ATOMIC_ACQUIRE));
  fflush(stdout);
  exit(0);
}
