// A library whose answers depend on who asks the dynamic linker: it loads its plugin by
// name, from the directories of its own RUNPATH, and it interposes on chained() and
// hands the call on to the next definition with dlsym(RTLD_NEXT), as OpenMP's tool
// interface and many interposers do.
#define _GNU_SOURCE
#include <dlfcn.h>

void* load_plugin(void) { return dlopen("libloader_plugin.so", RTLD_NOW); }

int chained(void) {
  int (*next)(void) = (int (*)(void))dlsym(RTLD_NEXT, "chained");
  return next ? 10 * next() : -1;
}
