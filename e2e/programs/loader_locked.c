// A process whose dynamic loader stays locked: a thread dlopen()s a library whose
// constructor waits (waiting_constructor.c) until STOPFILE exists, while the main
// thread sleeps in short naps. nmprof's dlopen, run on the main thread, cannot
// return before then. Prints "ready" once the constructor runs, then "ok" at the end.
//   loader_locked LIBRARY STOPFILE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static const char* library;

static void* load(void* arg) {
  (void)arg;
  return dlopen(library, RTLD_NOW);
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  library = argv[1];
  setenv("WAITING_CONSTRUCTOR_UNTIL", argv[2], 1);
  pthread_t loader;
  pthread_create(&loader, NULL, load, NULL);  // the constructor prints "ready"
  while (access(argv[2], F_OK) != 0) {
    struct timespec t = {0, 10 * 1000 * 1000};
    nanosleep(&t, NULL);
  }
  void* handle;
  pthread_join(loader, &handle);
  printf(handle ? "ok\n" : "dlopen failed\n");
  return handle ? 0 : 1;
}
