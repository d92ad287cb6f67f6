// A program with an allocator of its own (malloc and friends defined in the
// executable, as some embedded and game engines do): it counts every call it
// gets and prints the counts. A profiler whose own allocations reach this
// allocator changes the counts.
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static char* heap;
static size_t used;
static unsigned long mallocs, frees;

static void* bump(size_t size) {
  if (!heap) heap = mmap(NULL, 1 << 28, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  size = (size + sizeof(size_t) + 15) & ~(size_t)15;
  char* p = heap + used;
  used += size;
  *(size_t*)p = size - sizeof(size_t);
  return p + 16;
}

void* malloc(size_t size) { mallocs++; return bump(size); }
void* calloc(size_t n, size_t size) { mallocs++; return bump(n * size); }  // fresh mmap memory is zero
void* realloc(void* p, size_t size) {
  mallocs++;
  void* q = bump(size);
  if (p) memcpy(q, p, ((size_t*)((char*)p - 16))[0] < size ? ((size_t*)((char*)p - 16))[0] : size);
  return q;
}
void free(void* p) { if (p) frees++; }

int main(void) {
  static void* kept[1000];
  for (int round = 0; round < 50; round++) {
    for (int i = 0; i < 1000; i++) kept[i] = malloc(64 + i);
    for (int i = 0; i < 1000; i++) free(kept[i]);
  }
  unsigned long m = mallocs, f = frees;  // printf below may allocate
  printf("mallocs %lu frees %lu\n", m, f);
  return 0;
}
