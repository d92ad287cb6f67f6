// A daemon as redis, nginx and php-fpm make one: it double-forks, and the grandchild
// retitles itself by writing over its argv and environment (where `ps` reads its
// title), allocates, and runs on for a few seconds after the command has ended. The
// command prints the grandchild's pid once it allocated.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char** environ;
static void* volatile sink;

__attribute__((noinline)) void daemon_site(void) {
  for (int i = 0; i < 100; i++) sink = malloc(4096);
}

int main(int argc, char** argv) {
  (void)argc;
  int ready[2];
  if (pipe(ready) != 0) return 1;
  if (fork() == 0) {
    setsid();
    if (fork() != 0) _exit(0);  // the intermediate child leaves at once
    char* end = argv[0];
    for (char** e = environ; *e; e++) end = *e + strlen(*e);
    memset(argv[0], 0, (size_t)(end - argv[0]));
    strcpy(argv[0], "retitled: worker");
    daemon_site();
    pid_t self = getpid();
    if (write(ready[1], &self, sizeof self) != sizeof self) _exit(1);
    sleep(3);
    _exit(0);
  }
  pid_t daemon;
  if (read(ready[0], &daemon, sizeof daemon) != sizeof daemon) return 1;
  printf("%d\n", (int)daemon);
  return 0;
}
