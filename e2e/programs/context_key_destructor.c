// A thread that sets its nmprof.h context from a pthread key destructor of its own,
// after the agent's destructor (its key is older) ran, while a new thread starts.
// Thread A allocates at site_a with span 1, then ends; its destructor waits until
// thread B set span 2, sets span 1 again, and allocates at site_a_destructor; then
// B allocates at site_b. Each site's samples must carry their own thread's span.
// Runs the same without the agent. Prints "ok".
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

#include "nmprof.h"

enum { kAllocations = 4000, kBytes = 4096 };

static pthread_key_t key;
static sem_t a_released, b_set, a_done;

static void allocate(void) {
  for (int i = 0; i < kAllocations; i++) {
    volatile char* p = malloc(kBytes);
    if (!p) abort();
    p[0] = 1;
    free((void*)p);
  }
}
__attribute__((noinline)) void site_a(void) { allocate(); }
__attribute__((noinline)) void site_a_destructor(void) { allocate(); }
__attribute__((noinline)) void site_b(void) { allocate(); }

static void destructor(void* value) {
  (void)value;
  sem_post(&a_released);
  sem_wait(&b_set);
  nmprof_context_set(1, 1);
  site_a_destructor();
  sem_post(&a_done);
}

static void* thread_a(void* unused) {
  (void)unused;
  nmprof_context_set(1, 1);
  pthread_setspecific(key, &key);
  site_a();
  return NULL;
}

static void* thread_b(void* unused) {
  (void)unused;
  nmprof_context_set(2, 2);
  sem_post(&b_set);
  sem_wait(&a_done);
  site_b();
  return NULL;
}

int main(void) {
  sem_init(&a_released, 0, 0);
  sem_init(&b_set, 0, 0);
  sem_init(&a_done, 0, 0);
  nmprof_context_clear();  // the agent's key is made now, before the program's
  pthread_key_create(&key, destructor);
  pthread_t a, b;
  pthread_create(&a, NULL, thread_a, NULL);
  sem_wait(&a_released);
  pthread_create(&b, NULL, thread_b, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  puts("ok");
  return 0;
}
