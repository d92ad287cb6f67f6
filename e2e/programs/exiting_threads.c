// Threads that allocate up to the moment they exit: each allocates, leaves by
// pthread_exit from inside a call, and its thread-specific data destructor
// allocates and frees during the exit, after the thread's own code is gone.
//   exiting_threads [threads]
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_key_t key;
static void* volatile sink;

static void on_thread_exit(void* value) {
  char* copy = malloc(4096);
  memcpy(copy, value, 64);
  sink = copy;
  free(copy);
  free(value);
}

static void leave(void) { pthread_exit((void*)(uintptr_t)7); }

static void* work(void* arg) {
  pthread_setspecific(key, calloc(1, 256));
  for (int i = 0; i < 200; i++) free(malloc(100 + i));
  sink = malloc((uintptr_t)arg % 1000 + 1);  // allocated right before the exit
  leave();
  return NULL;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 200;
  pthread_key_create(&key, on_thread_exit);
  int joined = 0;
  for (int i = 0; i < threads; i += 8) {
    pthread_t ids[8];
    int n = threads - i < 8 ? threads - i : 8;
    for (int t = 0; t < n; t++) pthread_create(&ids[t], NULL, work, (void*)(uintptr_t)(i + t));
    for (int t = 0; t < n; t++) {
      void* result;
      if (pthread_join(ids[t], &result) == 0 && result == (void*)(uintptr_t)7) joined++;
    }
  }
  printf("%d threads exited\n", joined);
  return 0;
}
