// The library of replaced_self: an exported function over a hidden one. With
// -DMOVED, code comes before them.
#include <stdlib.h>

#include "replaced_library.h"

static void* volatile sink;

CODE_AHEAD(library_moved_ahead)

__attribute__((noinline, visibility("hidden"))) void* library_hidden_alloc(size_t n) {
  void* p = malloc(n);
  sink = p;
  return p;
}

void* library_alloc(size_t n) {
  void* p = library_hidden_alloc(n);
  sink = p;
  return p;
}
