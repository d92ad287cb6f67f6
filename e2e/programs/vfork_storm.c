// Starts many short children with vfork+exec (as posix_spawn and old shells do)
// while allocating: the child shares the parent's memory until it execs.
//   vfork_storm PROGRAM [children]
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int children = argc > 2 ? atoi(argv[2]) : 100;
  int ok = 0;
  for (int i = 0; i < children; i++) {
    void* before = malloc(1000 + i);
    pid_t pid = vfork();
    if (pid == 0) {
      execl(argv[1], argv[1], (char*)NULL);
      _exit(127);
    }
    int status;
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) ok++;
    free(before);
  }
  printf("%d of %d children succeeded\n", ok, children);
  return 0;
}
