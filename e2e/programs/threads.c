// Several named threads allocating at one site each.
//   threads COUNT ALLOCATIONS_PER_THREAD
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// Allocates and frees one block; the empty asm keeps the compiler from eliding the pair.
static inline void churn(size_t size) {
  void* p = malloc(size);
  __asm__ volatile("" : : "r"(p) : "memory");
  free(p);
}
static long per_thread;

__attribute__((noinline)) void thread_site(void) {
  churn(4000);
}

static void* work(void* arg) {
  char name[16];
  snprintf(name, sizeof name, "worker-%ld", (long)(intptr_t)arg);
  pthread_setname_np(pthread_self(), name);
  for (long i = 0; i < per_thread; i++) thread_site();
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int count = atoi(argv[1]);
  per_thread = atol(argv[2]);
  pthread_t t[64];
  for (long i = 0; i < count; i++) pthread_create(&t[i], NULL, work, (void*)(intptr_t)i);
  for (int i = 0; i < count; i++) pthread_join(t[i], NULL);
  return 0;
}
