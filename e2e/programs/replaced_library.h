#pragma once
#include <stddef.h>

// Built with -DMOVED, code comes before a module's functions: at their addresses the
// other build has other functions.
#ifdef MOVED
#define CODE_AHEAD(name)                                   \
  __attribute__((noinline)) int name(int x) {              \
    for (int i = 0; i < 64; i++) x = x * 31 + i;           \
    return x;                                              \
  }
#else
#define CODE_AHEAD(name)
#endif

// Allocates through a function of the library's own that is not exported.
void* library_alloc(size_t n);
