// ALLOCATE(size): `allocations` times, a malloc of `size` freed at once, which the
// compiler may not leave out. The program defines `static long allocations`.
#pragma once

#include <stdlib.h>

#define ALLOCATE(size)                              \
  for (long i = 0; i < allocations; i++) {          \
    void* p = malloc(size);                         \
    __asm__ volatile("" : : "r"(p) : "memory");     \
    free(p);                                        \
  }
