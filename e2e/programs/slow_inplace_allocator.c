// An allocator in a shared library whose realloc is slow and never moves a block:
// each block has 1 GiB of address space of its own, and a realloc takes a
// millisecond (a realloc that is mostly in progress, as a busy thread's can be).
// Free keeps the memory. A program linked with it gets its blocks.
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define ROOM ((size_t)1 << 30)

static char* arena;
static size_t blocks;

static void* place(size_t size) {
  if (size > ROOM - 64) return NULL;
  if (!arena) {
    arena = mmap(NULL, ROOM * 64, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (arena == MAP_FAILED) return NULL;
  }
  size_t n = __atomic_fetch_add(&blocks, 1, __ATOMIC_RELAXED);
  if (n >= 64) return NULL;
  size_t* header = (size_t*)(arena + n * ROOM);
  *header = size;
  return header + 8;  // 64-byte aligned
}

void* malloc(size_t size) { return place(size); }
void free(void* p) { (void)p; }
void* calloc(size_t count, size_t size) { return place(count * size); }  // fresh mmap memory is zero
void* realloc(void* p, size_t size) {
  if (!p) return place(size);
  if (size > ROOM - 64) return NULL;
  struct timespec ms = {0, 1000000};
  nanosleep(&ms, NULL);
  ((size_t*)p)[-8] = size;
  return p;
}
size_t malloc_usable_size(void* p) { return p ? ((size_t*)p)[-8] : 0; }
void* memalign(size_t alignment, size_t size) { return alignment <= 64 ? place(size) : NULL; }
void* aligned_alloc(size_t alignment, size_t size) { return memalign(alignment, size); }
int posix_memalign(void** out, size_t alignment, size_t size) { return (*out = memalign(alignment, size)) ? 0 : 12; }
