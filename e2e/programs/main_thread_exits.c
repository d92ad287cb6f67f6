// The main thread leaves by pthread_exit() while a worker allocates: the process
// ends (with status 0) when the worker does, as POSIX says.
//   main_thread_exits
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void* work(void* arg) {
  (void)arg;
  for (int i = 0; i < 200000; i++) {
    void* p = malloc(64 + i % 512);
    __asm__ volatile("" : : "r"(p) : "memory");  // keeps the pair
    free(p);
  }
  printf("worker done\n");
  fflush(stdout);
  return NULL;
}

int main(void) {
  pthread_t worker;
  pthread_create(&worker, NULL, work, NULL);
  pthread_exit(NULL);
}
