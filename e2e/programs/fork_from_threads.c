// A threaded parent forks many short-lived children: 3 threads allocate all along
// (each through a library loaded at start, whose unwind tables the agent compiles on
// first use), and each child allocates and leaves with _exit. Prints "ok".
//   fork_from_threads <children> [library.so...]
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int stop;
static void (*allocators[64])(void);
static int allocator_count;

static void* churn(void* arg) {
  (void)arg;
  while (!stop) {
    for (int i = 0; i < allocator_count; i++) allocators[i]();
    void* p = malloc(100);
    __asm__ volatile("" : : "r"(p) : "memory");
    free(p);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int children = argc > 1 ? atoi(argv[1]) : 300;
  for (int i = 2; i < argc && allocator_count < 64; i++) {
    void* lib = dlopen(argv[i], RTLD_NOW);
    if (!lib) return 1;
    void (*(*entry)(void))(void) = (void (*(*)(void))(void))dlsym(lib, "plugin_entry");
    if (!entry) return 1;
    allocators[allocator_count++] = entry();
  }
  pthread_t threads[3];
  for (int i = 0; i < 3; i++) pthread_create(&threads[i], NULL, churn, NULL);
  for (int i = 0; i < children; i++) {
    pid_t pid = fork();
    if (pid == 0) {
      for (int j = 0; j < 200; j++) {
        void* p = malloc(4096);
        __asm__ volatile("" : : "r"(p) : "memory");
        free(p);
      }
      _exit(0);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  }
  stop = 1;
  for (int i = 0; i < 3; i++) pthread_join(threads[i], NULL);
  puts("ok");
  return 0;
}
