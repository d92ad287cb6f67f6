// Forks a child that outlives this program: it allocates, allocates again a second
// later (so its recording is written and its file exists), tells the parent, and
// goes on for a few seconds after the parent has exited.
#include <stdlib.h>
#include <unistd.h>

static void* volatile sink;

__attribute__((noinline)) void daemon_site(void) {
  for (int i = 0; i < 100; i++) sink = malloc(4096);
}

int main(void) {
  int ready[2];
  if (pipe(ready) != 0) return 1;
  if (fork() == 0) {
    close(ready[0]);
    setsid();
    daemon_site();
    sleep(1);
    usleep(200000);
    daemon_site();
    if (write(ready[1], "r", 1) != 1) _exit(1);
    close(ready[1]);
    sleep(4);
    daemon_site();
    _exit(0);
  }
  close(ready[1]);
  char c;
  return read(ready[0], &c, 1) == 1 ? 0 : 1;
}
