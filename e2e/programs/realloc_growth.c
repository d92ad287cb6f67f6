// Grows one buffer by realloc, STEP bytes at a time, to MIB MiB, writing into what
// each step added, and keeps it to the end: what the program allocated, and holds,
// is MIB MiB, though the sizes its reallocs asked for add up to far more. Prints it.
//   realloc_growth MIB STEP [shrink]
// shrink: then shrinks it, STEP bytes at a time, to an eighth; prints that too.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char* __attribute__((noinline)) grow_buffer(size_t total, size_t step) {
  char* buffer = NULL;
  for (size_t size = step; size <= total; size += step) {
    buffer = realloc(buffer, size);
    if (!buffer) exit(1);
    memset(buffer + size - step, 'g', step);
  }
  return buffer;
}

static char* __attribute__((noinline)) shrink_buffer(char* buffer, size_t total, size_t final, size_t step) {
  for (size_t size = total - step; size >= final; size -= step) {
    buffer = realloc(buffer, size);
    if (!buffer) exit(1);
  }
  return buffer;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  size_t total = strtoull(argv[1], NULL, 10) << 20, step = strtoull(argv[2], NULL, 10);
  char* buffer = grow_buffer(total, step);
  if (argc == 4) {
    buffer = shrink_buffer(buffer, total, total / 8, step);
    printf("%zu %zu\n", total, total / 8);
    return buffer[total / 8 - 1] == 'g' ? 0 : 1;
  }
  printf("%zu\n", total);
  return buffer[total - 1] == 'g' ? 0 : 1;
}
