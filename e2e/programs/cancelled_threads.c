// Threads that allocate in a loop, cancelled and joined by main; prints "ok" when
// all were cancelled.
//   cancelled_threads <threads>         deferred: a cancellation point in the loop
//   cancelled_threads <threads> async   asynchronous: the loop computes and allocates
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

// Mostly computing, as async cancellation is meant for; an allocation in between
// (only there may the cancellation find the thread inside nmprof).
static void* compute(void* arg) {
  (void)arg;
  pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
  volatile double x = 1;
  for (;;) {
    for (int i = 0; i < 20000; i++) x = x * 1.0000001 + 1e-9;
    void* p = malloc(4096);
    __asm__ volatile("" : : "r"(p) : "memory");
    free(p);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 100;
  int async = argc > 2 && strcmp(argv[2], "async") == 0;
  for (int i = 0; i < threads; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, async ? compute : churn, NULL) != 0) return 1;
    if (async) usleep(1000);
    pthread_cancel(t);
    void* result;
    if (pthread_join(t, &result) != 0 || result != PTHREAD_CANCELED) return 1;
  }
  puts("ok");
  return 0;
}
