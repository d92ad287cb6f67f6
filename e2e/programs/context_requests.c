// Threads serving "requests" with nmprof.h context: each request sets a span, a
// route and a tenant, allocates a known number of bytes for its route, and clears
// the context; between requests each thread allocates outside any context.
// Bytes per route: /checkout 80 MiB, /search 40 MiB, /static 20 MiB; 37.5 MiB outside.
// Runs the same without the agent (the calls do nothing then). An argument is
// appended to the tenant values (longer values, same samples).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "nmprof.h"

enum { kThreads = 4, kRequestsPerThread = 60 };

struct Route {
  const char* path;
  size_t block;  // bytes per allocation
  int blocks;    // allocations per request
};
static const struct Route kRoutes[] = {{"/checkout", 4096, 256}, {"/search", 2048, 256}, {"/static", 1024, 256}};

static void allocate(size_t block, int blocks) {
  for (int i = 0; i < blocks; i++) {
    volatile char* p = malloc(block);
    if (!p) abort();
    p[0] = 1;
    free((void*)p);
  }
}

static const char* tenant_suffix = "";

static void* serve(void* arg) {
  int thread = (int)(long)arg;
  char tenant[NMPROF_ATTRIBUTE_SIZE];
  snprintf(tenant, sizeof tenant, "tenant-%d%s", thread % 2, tenant_suffix);
  for (int i = 0; i < kRequestsPerThread; i++) {
    const struct Route* route = &kRoutes[(i + thread) % 3];
    uint64_t request = (uint64_t)thread * 1000 + (uint64_t)i + 1;
    nmprof_context_set(request, request);
    nmprof_context_set_attribute("route", route->path);
    nmprof_context_set_attribute("tenant", tenant);
    nmprof_context_set_attribute("undeclared", "ignored");
    allocate(route->block, route->blocks);
    nmprof_context_clear();
    allocate(512, 320);  // 160 KiB outside any request: 37.5 MiB over all threads
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) tenant_suffix = argv[1];
  pthread_t threads[kThreads];
  for (long t = 0; t < kThreads; t++) pthread_create(&threads[t], NULL, serve, (void*)t);
  for (int t = 0; t < kThreads; t++) pthread_join(threads[t], NULL);
  puts("served");
  return 0;
}
