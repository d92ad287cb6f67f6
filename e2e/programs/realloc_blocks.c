// Makes COUNT blocks of FROM bytes and resizes each by realloc to TO bytes, STEP
// bytes at a time (down when TO < FROM), in resize_block; keeps them all to the
// end. Prints what it holds then, COUNT * TO bytes.
//   realloc_blocks COUNT FROM TO STEP
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char* __attribute__((noinline)) resize_block(size_t from, size_t to, size_t step) {
  char* block = malloc(from);
  if (!block) exit(1);
  memset(block, 'r', from);
  size_t size = from;
  while (size != to) {
    size = to > size ? (to - size > step ? size + step : to) : (size - to > step ? size - step : to);
    block = realloc(block, size);
    if (!block) exit(1);
    block[size - 1] = 'r';
  }
  return block;
}

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  size_t count = strtoull(argv[1], NULL, 10), from = strtoull(argv[2], NULL, 10);
  size_t to = strtoull(argv[3], NULL, 10), step = strtoull(argv[4], NULL, 10);
  char** blocks = malloc(count * sizeof(char*));
  if (!blocks) return 1;
  for (size_t i = 0; i < count; i++) blocks[i] = resize_block(from, to, step);
  printf("%zu\n", count * to);
  return blocks[count - 1][to - 1] == 'r' ? 0 : 1;
}
