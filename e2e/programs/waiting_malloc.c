// A program with its own malloc (defined in the executable, over the C library's)
// that holds its lock while it waits a moment, as an allocator waits for an arena:
// half of the program's time is in there, half computing. nmprof must not run its
// dlopen on the thread while it is inside malloc: dlopen's own malloc would wait for
// that lock for ever. Prints "ready", then "ok ROUNDS" once STOPFILE exists.
//   waiting_malloc STOPFILE
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

extern void* __libc_malloc(size_t size);
extern void* __libc_calloc(size_t count, size_t size);
extern void* __libc_realloc(void* p, size_t size);
extern void __libc_free(void* p);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int waits;  // from main on: the loader's own allocations at startup do not wait

// Not inlined into main: the allocator's frames are on the stack while it waits.
__attribute__((noinline)) static void nap(void) {
  struct timespec t = {0, 2 * 1000 * 1000};
  nanosleep(&t, NULL);
}

__attribute__((noinline)) void* malloc(size_t size) {
  pthread_mutex_lock(&lock);
  if (waits) nap();
  void* p = __libc_malloc(size);
  pthread_mutex_unlock(&lock);
  return p;
}

__attribute__((noinline)) void* calloc(size_t count, size_t size) {
  pthread_mutex_lock(&lock);
  void* p = __libc_calloc(count, size);
  pthread_mutex_unlock(&lock);
  return p;
}

__attribute__((noinline)) void* realloc(void* old, size_t size) {
  pthread_mutex_lock(&lock);
  void* p = __libc_realloc(old, size);
  pthread_mutex_unlock(&lock);
  return p;
}

__attribute__((noinline)) void free(void* p) {
  pthread_mutex_lock(&lock);
  __libc_free(p);
  pthread_mutex_unlock(&lock);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void compute(void) {
  for (double end = now() + 0.002; now() < end;) {
  }
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  setvbuf(stdout, NULL, _IOLBF, 0);
  waits = 1;
  printf("ready\n");
  unsigned long rounds = 0;
  for (; access(argv[1], F_OK) != 0; rounds++) {
    compute();
    void* p = malloc(64);
    __asm__ volatile("" : : "r"(p) : "memory");
    free(p);
  }
  printf("ok %lu\n", rounds);
  return 0;
}
