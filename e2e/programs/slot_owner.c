// Allocates until its malloc and free are libc's own again, then says whose they
// are. Built with -fno-plt, `malloc` as a value is read from the program's GOT slot,
// which the agent patches while it records; a recording that stopped (--max-size,
// ulimit -f, no memory) gives the slot back. A plain run prints the same at once.
//   slot_owner SECONDS
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char* owner(void* function) {
  Dl_info info;
  if (!dladdr(function, &info) || !info.dli_fname) return "unknown";
  const char* slash = strrchr(info.dli_fname, '/');
  return slash ? slash + 1 : info.dli_fname;
}

// Read from the GOT slot at each call: a loop would keep the first value read.
__attribute__((noipa)) static void* malloc_now(void) { return (void*)malloc; }
__attribute__((noipa)) static void* free_now(void) { return (void*)free; }

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  double give_up = now() + atof(argv[1]);
  void* (*volatile malloc_slot)(size_t);
  void (*volatile free_slot)(void*);
  for (;;) {
    malloc_slot = (void* (*)(size_t))malloc_now();
    free_slot = (void (*)(void*))free_now();
    int libcs =
        strncmp(owner((void*)malloc_slot), "libc.so", 7) == 0 && strncmp(owner((void*)free_slot), "libc.so", 7) == 0;
    if (libcs || now() > give_up) break;
    for (int i = 0; i < 1000; i++) free_slot(malloc_slot(100 + i));  // not elided as free(malloc()) would be
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  printf("malloc is %s's, free is %s's\n", owner((void*)malloc_slot), owner((void*)free_slot));
  return 0;
}
