// Asks loader_host.c's questions, then allocates COUNT blocks of SIZE bytes in the
// plugin once the agent has had the time of one write to patch it.
//   loader_user COUNT SIZE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void* load_plugin(void);
int chained(void);

static void* idle(void* arg) {
  pause();
  return arg;
}

int main(int argc, char** argv) {
  size_t count = strtoul(argv[1], NULL, 0), size = strtoul(argv[2], NULL, 0);
  pthread_t thread;  // a process with threads: the agent writes from a thread of its own
  pthread_create(&thread, NULL, idle, NULL);
  void* plugin = load_plugin();
  if (!plugin) {
    printf("dlopen: %s\n", dlerror());
    return 1;
  }
  printf("chained: %d\n", chained());
  sleep(2);
  void* (*block)(size_t) = (void* (*)(size_t))dlsym(plugin, "plugin_block");
  for (size_t i = 0; i < count; i++) free(block(size));
  printf("allocated %zu blocks of %zu bytes in the plugin\n", count, size);
  return 0;
}
