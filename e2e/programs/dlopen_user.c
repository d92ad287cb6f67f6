// Loads a library after start (dlopen) and calls a function in it that allocates.
//   dlopen_user /path/libplugin.so
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  void (*allocate)(void) = (void (*)(void))dlsym(lib, "plugin_allocate");
  if (!allocate) return 1;
  allocate();
  return 0;
}
