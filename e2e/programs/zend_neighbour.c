/* A neighbour of nmprof in PHP: custom ZendMM handlers installed before nmprof's
 * (from the same moment, PHP's sysconf call right after it made its heap, which
 * this library interposes), that count the calls they see and forward them to the
 * engine's allocator. Prints its count at exit. No PHP headers: the engine's API is
 * looked up by name. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

static void* heap;
static void* (*heap_alloc)(void*, size_t);
static void (*heap_free)(void*, void*);
static void* (*heap_realloc)(void*, void*, size_t);
static long calls;

static void* counting_malloc(size_t size) { calls++; return heap_alloc(heap, size); }
static void counting_free(void* p) {
  calls++;
  if (p != heap) heap_free(heap, p);
}
static void* counting_realloc(void* p, size_t size) { calls++; return heap_realloc(heap, p, size); }

long sysconf(int name) {
  static long (*real)(int);
  if (!real) real = (long (*)(int))dlsym(RTLD_NEXT, "sysconf");
  void* (*get_heap)(void) = (void* (*)(void))dlsym(RTLD_DEFAULT, "zend_mm_get_heap");
  if (!heap && get_heap && get_heap()) {
    void (*set_handlers)(void*, void*, void*, void*) =
        (void (*)(void*, void*, void*, void*))dlsym(RTLD_DEFAULT, "zend_mm_set_custom_handlers");
    heap_alloc = (void* (*)(void*, size_t))dlsym(RTLD_DEFAULT, "_zend_mm_alloc");
    heap_free = (void (*)(void*, void*))dlsym(RTLD_DEFAULT, "_zend_mm_free");
    heap_realloc = (void* (*)(void*, void*, size_t))dlsym(RTLD_DEFAULT, "_zend_mm_realloc");
    heap = get_heap();
    set_handlers(heap, counting_malloc, counting_free, counting_realloc);
  }
  return real(name);
}

__attribute__((destructor)) static void report(void) {
  if (heap) fprintf(stderr, "neighbour saw %ld calls\n", calls);
}
