// nmprof's demo: a small "service" whose native memory grows. Request handlers
// allocate and free buffers (churn), a compression path uses zlib, a config cache
// holds strdup'ed strings (held on purpose), and a session store forgets to free
// one session in ten (the leak to find).
//   nmprof-demo [seconds]
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

static volatile int running = 1;

__attribute__((noinline)) static void handle_request(unsigned seed) {
  size_t size = 512 + seed % 8192;
  char* buffer = malloc(size);
  memset(buffer, (int)seed, size);
  __asm__ volatile("" : : "r"(buffer) : "memory");  // the buffer is used, as a real handler's is
  free(buffer);
}

__attribute__((noinline)) static void compress_response(const char* data, size_t size) {
  z_stream s;
  memset(&s, 0, sizeof s);
  if (deflateInit2(&s, 6, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return;
  unsigned char out[4096];
  s.next_in = (unsigned char*)data;
  s.avail_in = (unsigned)size;
  s.next_out = out;
  s.avail_out = sizeof out;
  deflate(&s, Z_FINISH);
  deflateEnd(&s);
}

struct session {
  char* user;
  char* payload;
};

__attribute__((noinline)) static struct session* open_session(unsigned id) {
  struct session* s = malloc(sizeof *s);
  char name[32];
  snprintf(name, sizeof name, "user-%u", id);
  s->user = strdup(name);
  s->payload = calloc(1, 16384);
  return s;
}

__attribute__((noinline)) static void close_session(struct session* s, unsigned id) {
  if (id % 10 == 3) return;  // the bug: this path forgets to free
  free(s->payload);
  free(s->user);
  free(s);
}

static char** config_cache;

__attribute__((noinline)) static void load_config(void) {
  config_cache = calloc(2000, sizeof *config_cache);
  for (int i = 0; i < 2000; i++) {
    char line[256];
    snprintf(line, sizeof line, "setting.%d = %0200d", i, i);
    config_cache[i] = strdup(line);
  }
}

static void* worker(void* arg) {
  unsigned id = (unsigned)(uintptr_t)arg * 1000003u;
  char text[65536];
  memset(text, 'a', sizeof text);
  while (running) {
    for (int i = 0; i < 100; i++) handle_request(id + (unsigned)i);
    compress_response(text, sizeof text);
    struct session* s = open_session(id);
    close_session(s, id);
    id++;
  }
  return NULL;
}

int main(int argc, char** argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 3.0;
  load_config();
  pthread_t threads[4];
  for (uintptr_t i = 0; i < 4; i++) {
    pthread_create(&threads[i], NULL, worker, (void*)i);
    char name[16];
    snprintf(name, sizeof name, "worker-%u", (unsigned)i);
    pthread_setname_np(threads[i], name);
  }
  struct timespec pause = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
  nanosleep(&pause, NULL);
  running = 0;
  for (int i = 0; i < 4; i++) pthread_join(threads[i], NULL);
  printf("demo: done\n");
  return 0;
}
