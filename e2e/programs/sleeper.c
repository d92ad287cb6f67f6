// Allocates, says so on stdout, then waits to be killed.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

// Allocates and frees one block; the empty asm keeps the compiler from eliding the pair.
static inline void churn(size_t size) {
  void* p = malloc(size);
  __asm__ volatile("" : : "r"(p) : "memory");
  free(p);
}

__attribute__((noinline)) void before_sleep_site(void) {
  for (int i = 0; i < 1000; i++) {
    churn(50000);
  }
}

int main(void) {
  before_sleep_site();
  printf("ready\n");
  fflush(stdout);
  for (;;) pause();
}
