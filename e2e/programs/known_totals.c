// Allocates known totals at three sites (small, medium, large blocks), optionally
// on several threads, freeing everything: the estimates of a sampled run must agree
// with these totals within statistical bounds.
//   known_totals THREADS SMALL_COUNT MEDIUM_COUNT LARGE_COUNT
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { kSmall = 48, kMedium = 3000, kLarge = 4 << 20 };
static long counts[3];

// Allocates and frees one block; the empty asm keeps the compiler from eliding the
// pair. A macro, so that each site is the innermost frame of its allocations (a
// function inlined into it would be a frame of its own).
#define CHURN(size)                              \
  do {                                           \
    void* p = malloc(size);                      \
    __asm__ volatile("" : : "r"(p) : "memory");  \
    free(p);                                     \
  } while (0)

__attribute__((noinline)) void site_small(void) { CHURN(kSmall); }
__attribute__((noinline)) void site_medium(void) { CHURN(kMedium); }
__attribute__((noinline)) void site_large(void) { CHURN(kLarge); }

static void* work(void* arg) {
  (void)arg;
  for (long i = 0; i < counts[0]; i++) site_small();
  for (long i = 0; i < counts[1]; i++) site_medium();
  for (long i = 0; i < counts[2]; i++) site_large();
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  int threads = atoi(argv[1]);
  for (int i = 0; i < 3; i++) counts[i] = atol(argv[i + 2]);
  pthread_t t[64];
  for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, work, NULL);
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  printf("%d %d %d\n", kSmall, kMedium, kLarge);
  return 0;
}
