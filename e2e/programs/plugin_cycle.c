// Loads each library given, calls its plugin, and unloads it before loading the
// next; prints where each was loaded (the same address is what the test wants).
//   plugin_cycle lib1.so lib2.so ...
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    void* lib = dlopen(argv[i], RTLD_NOW);
    if (!lib) {
      fprintf(stderr, "%s\n", dlerror());
      return 1;
    }
    void (*(*entry)(void))(void) = (void (*(*)(void))(void))dlsym(lib, "plugin_entry");
    void (*fn)(void) = entry();
    for (int j = 0; j < 10; j++) fn();
    printf("%p\n", (void*)fn);
    dlclose(lib);
  }
  return 0;
}
