// Threads that allocate in a loop with a cancellation point in it, cancelled
// (deferred) and joined by main; prints "ok" when all were cancelled.
//   cancelled_threads <threads>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void* churn(void* arg) {
  (void)arg;
  for (;;) {
    for (int i = 0; i < 1000; i++) {
      void* p = malloc(4096);
      __asm__ volatile("" : : "r"(p) : "memory");
      free(p);
    }
    pthread_testcancel();
  }
  return NULL;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 100;
  for (int i = 0; i < threads; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, churn, NULL) != 0) return 1;
    pthread_cancel(t);
    void* result;
    if (pthread_join(t, &result) != 0 || result != PTHREAD_CANCELED) return 1;
  }
  puts("ok");
  return 0;
}
