// Leaks a known number of bytes at known sites and frees everything else, in
// every way a free can happen: on the allocating thread, on another thread, at the
// end of realloc chains, with addresses reused all the time.
//   live_leak THREADS LEAKS_PER_THREAD
// Per thread: LEAKS blocks of 1000 bytes kept (site_leak), LEAKS/20 realloc chains
// whose final 20000-byte block is kept (site_chain_leak); the rest is freed.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { kLeakSize = 1000, kChainSteps = 10, kChainFinal = 20000, kQueue = 4096 };

static long leaks;
static void** kept;  // never freed: the leak
static long kept_count;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

// Blocks handed to the freer thread.
static void* queue[kQueue];
static size_t head, tail;
static int producers_done;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_changed = PTHREAD_COND_INITIALIZER;

static void keep(void* p) {
  pthread_mutex_lock(&kept_lock);
  kept[kept_count++] = p;
  pthread_mutex_unlock(&kept_lock);
}

static void hand_over(void* p) {
  pthread_mutex_lock(&queue_lock);
  while (tail - head == kQueue) pthread_cond_wait(&queue_changed, &queue_lock);
  queue[tail++ % kQueue] = p;
  pthread_cond_broadcast(&queue_changed);
  pthread_mutex_unlock(&queue_lock);
}

__attribute__((noinline)) void site_leak(void) { keep(malloc(kLeakSize)); }

__attribute__((noinline)) void site_churn(void) {
  void* p = malloc(500);
  __asm__ volatile("" : : "r"(p) : "memory");
  free(p);
}

__attribute__((noinline)) void site_cross_thread(void) { hand_over(malloc(3000)); }

__attribute__((noinline)) void* site_chain(size_t final) {
  char* p = malloc(64);
  for (int step = 1; step <= kChainSteps; step++) p = realloc(p, final * step / kChainSteps);
  return p;
}

__attribute__((noinline)) void site_chain_freed(void) { free(site_chain(kChainFinal)); }
__attribute__((noinline)) void site_chain_leak(void) { keep(site_chain(kChainFinal)); }

static void* freer(void* arg) {
  (void)arg;
  pthread_mutex_lock(&queue_lock);
  for (;;) {
    while (head == tail && !producers_done) pthread_cond_wait(&queue_changed, &queue_lock);
    if (head == tail) break;
    void* p = queue[head++ % kQueue];
    pthread_cond_broadcast(&queue_changed);
    pthread_mutex_unlock(&queue_lock);
    free(p);
    pthread_mutex_lock(&queue_lock);
  }
  pthread_mutex_unlock(&queue_lock);
  return NULL;
}

static void* worker(void* arg) {
  (void)arg;
  for (long i = 0; i < leaks; i++) {
    site_leak();
    for (int k = 0; k < 20; k++) site_churn();
    site_cross_thread();
    if (i % 20 == 0) {
      site_chain_freed();
      site_chain_leak();
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int threads = atoi(argv[1]);
  leaks = atol(argv[2]);
  kept = calloc((size_t)(threads * (leaks + leaks / 20 + 1)), sizeof *kept);
  pthread_t t[64], f;
  pthread_create(&f, NULL, freer, NULL);
  for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  pthread_mutex_lock(&queue_lock);
  producers_done = 1;
  pthread_cond_broadcast(&queue_changed);
  pthread_mutex_unlock(&queue_lock);
  pthread_join(f, NULL);
  printf("%ld %ld\n", (long)kLeakSize * threads * leaks, (long)kChainFinal * threads * ((leaks + 19) / 20));
  return 0;
}
