// Process trees: the parent allocates, a forked child allocates and exits, and a
// forked child execs this program again, which allocates too. "siblings": four
// children forked one after the other allocate alike, as a server's workers do.
//   forker tree | forker exec-child | forker fork-only | forker siblings
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

// Allocates and frees one block; the empty asm keeps the compiler from eliding the pair.
static inline void churn(size_t size) {
  void* p = malloc(size);
  __asm__ volatile("" : : "r"(p) : "memory");
  free(p);
}

static void allocate(long count, size_t size) {
  for (long i = 0; i < count; i++) {
    churn(size);
  }
}

__attribute__((noinline)) void parent_site(void) { allocate(2000, 100000); }
__attribute__((noinline)) void fork_child_site(void) { allocate(2000, 100000); }
__attribute__((noinline)) void exec_child_site(void) { allocate(2000, 100000); }

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "exec-child") == 0) {
    exec_child_site();
    return 0;
  }
  parent_site();
  if (argc == 2 && strcmp(argv[1], "siblings") == 0) {
    for (int i = 0; i < 4; i++)
      if (fork() == 0) {
        fork_child_site();
        exit(0);
      }
    while (wait(NULL) > 0) {
    }
    return 0;
  }
  pid_t forked = fork();
  if (forked == 0) {
    fork_child_site();
    exit(0);
  }
  waitpid(forked, NULL, 0);
  if (argc == 2 && strcmp(argv[1], "fork-only") == 0) return 0;
  pid_t execed = fork();
  if (execed == 0) {
    execl("/proc/self/exe", argv[0], "exec-child", (char*)NULL);
    _exit(127);
  }
  int status = 0;
  waitpid(execed, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
