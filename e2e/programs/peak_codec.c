// The library of peak_phases: a decoder that works in temporary buffers.
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void codec_decode(size_t size) {
  char* buffer = malloc(size);
  memset(buffer, 1, size);
  __asm__ volatile("" : : "r"(buffer) : "memory");
  free(buffer);
}
