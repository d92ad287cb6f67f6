// A library with its own malloc (like a bundled jemalloc). Opened with RTLD_DEEPBIND
// its GOT slot binds to this malloc, and must keep reaching it after patching.
#include <stddef.h>

static char arena[1 << 20];
static size_t used;
int own_allocator_calls;

void* malloc(size_t n) {
  own_allocator_calls++;
  void* p = arena + used;
  used += (n + 15) & ~(size_t)15;
  return p;
}
void free(void* p) { (void)p; }

void* own_allocator_allocate(size_t n) { return malloc(n); }
