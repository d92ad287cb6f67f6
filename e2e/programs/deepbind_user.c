// Loads plugins with RTLD_DEEPBIND (each binds to its own definitions first, as
// some plugin hosts do) and calls their allocating function.
//   deepbind_user PLUGIN...
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    void* plugin = dlopen(argv[i], RTLD_NOW | RTLD_DEEPBIND);
    void (*allocate)(void) = plugin ? (void (*)(void))dlsym(plugin, "plugin_allocate") : NULL;
    if (!allocate) {
      fprintf(stderr, "%s\n", dlerror());
      return 1;
    }
    allocate();
    printf("plugin %d ran\n", i);
  }
  return 0;
}
