// A plugin its host finds by name through the host's RUNPATH ($ORIGIN/plugins); and,
// linked into the program after the host, the last definition of chained() that the
// host's RTLD_NEXT look-up reaches.
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void* plugin_block(size_t size) {
  void* p = malloc(size);
  memset(p, 1, size);
  return p;
}

int chained(void) { return 7; }
