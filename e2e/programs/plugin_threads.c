// Threads that each load one of two plugins (returning_plugin.c, same layout: the
// loader may put them at one address in turn), call it, and unload it, over and
// over, all at once. Prints how many allocations the plugins made.
//   plugin_threads LIB_A LIB_B
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { kThreads = 4, kRounds = 400, kCalls = 10 };
static const char* libraries[2];

static void* worker(void* arg) {
  long id = (long)arg, calls = 0;
  for (int round = 0; round < kRounds; round++) {
    void* library = dlopen(libraries[(round + id) % 2], RTLD_NOW);
    if (!library) {
      fprintf(stderr, "%s\n", dlerror());
      exit(1);
    }
    void* (*allocate)(void) = (void* (*)(void))dlsym(library, "plugin_alloc");
    for (int i = 0; i < kCalls; i++, calls++) free(allocate());
    dlclose(library);
  }
  return (void*)calls;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  libraries[0] = argv[1];
  libraries[1] = argv[2];
  pthread_t threads[kThreads];
  for (long t = 0; t < kThreads; t++) pthread_create(&threads[t], NULL, worker, (void*)t);
  long calls = 0;
  for (int t = 0; t < kThreads; t++) {
    void* counted;
    pthread_join(threads[t], &counted);
    calls += (long)counted;
  }
  printf("%ld\n", calls);
  return 0;
}
