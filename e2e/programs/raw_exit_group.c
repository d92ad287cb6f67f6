// Leaves by a raw exit_group, as every Go program does: no exit handler, destructor
// or hook of the agent's runs. Allocates COUNT blocks of SIZE bytes at one site,
// frees every other one, then exits at once (before the agent's writer has written
// anything). HOW:
//   threads   a thread is still running at the exit_group
//   wait      waits to be killed (SIGKILL ends it as abruptly)
//   children  says whether it has any child to wait for (__WALL, as strace waits):
//             the agent's exit watch must not be one
//   fork      a forked child does the same as its parent, which waits for it
//   raw_exit_group COUNT SIZE [HOW]
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void* idle(void* arg) {
  for (;;) pause();
  return arg;
}

__attribute__((noinline)) void* kept_or_freed(size_t size) {
  void* p = malloc(size);
  memset(p, 1, 16);
  return p;
}

int main(int argc, char** argv) {
  size_t count = strtoul(argv[1], NULL, 0), size = strtoul(argv[2], NULL, 0);
  const char* how = argc > 3 ? argv[3] : "";
  if (strcmp(how, "threads") == 0) {
    pthread_t t;
    pthread_create(&t, NULL, idle, NULL);
  }
  pid_t child = strcmp(how, "fork") == 0 ? fork() : -1;
  void** blocks = calloc(count, sizeof *blocks);
  for (size_t i = 0; i < count; i++) blocks[i] = kept_or_freed(size);
  for (size_t i = 0; i < count; i += 2) free(blocks[i]);
  if (child > 0) waitpid(child, NULL, 0);
  printf("%s: kept %zu blocks of %zu bytes\n", child == 0 ? "child" : "parent", count / 2, size);
  if (strcmp(how, "children") == 0) {
    siginfo_t info = {0};
    int waited = waitid(P_ALL, 0, &info, WEXITED | WNOHANG | __WALL);
    printf("%s\n", waited != 0 && errno == ECHILD ? "no children" : "a child");
  }
  fflush(stdout);
  if (strcmp(how, "wait") == 0)
    for (;;) pause();
  syscall(SYS_exit_group, 0);
  return 1;
}
