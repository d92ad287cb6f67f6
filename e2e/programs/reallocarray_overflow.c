// reallocarray with a count and size whose product overflows fails (ENOMEM) and
// leaves the block as it was: the program keeps it and prints its size.
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char* __attribute__((noinline, noclone)) kept_block(size_t size) {
  char* block = malloc(size);
  if (!block) exit(1);
  memset(block, 'k', size);
  return block;
}

int main(void) {
  char* block = kept_block(4096);
  volatile size_t count = SIZE_MAX / 2;  // not a constant: the compiler leaves the call alone
  if (reallocarray(block, count, 4) || errno != ENOMEM) return 1;
  printf("%d\n", 4096);
  return block[4095] == 'k' ? 0 : 1;
}
