// Threads that each dlopen a library of their own at the same time (copies of one
// library with thousands of relocations, so that relocating one takes a while), then
// call its slow_plugin_alloc, which allocates and frees 1000 blocks.
//   parallel_dlopen lazy|now LIBRARY...
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mode;

static void* worker(void* path) {
  void* library = dlopen(path, mode);
  if (!library) {
    fprintf(stderr, "%s\n", dlerror());
    exit(1);
  }
  long (*allocate)(int) = (long (*)(int))dlsym(library, "slow_plugin_alloc");
  return (void*)allocate(1000);
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  mode = strcmp(argv[1], "lazy") == 0 ? RTLD_LAZY : RTLD_NOW;
  int count = argc - 2;
  pthread_t* threads = malloc(sizeof(pthread_t) * count);
  for (int i = 0; i < count; i++) pthread_create(&threads[i], NULL, worker, argv[i + 2]);
  long allocations = 0;
  for (int i = 0; i < count; i++) {
    void* made;
    pthread_join(threads[i], &made);
    allocations += (long)made;
  }
  printf("%ld\n", allocations);
  return 0;
}
