// A server that forks workers as it runs, as pre-forking servers and shells do: every
// 20 ms a worker that allocates at worker_site for a moment and exits; every tenth
// one stays, allocating now and then, until STOPFILE exists. The parent allocates at
// parent_site. Prints "ready", then "ok WORKERS" once STOPFILE exists and every
// worker has ended well.
//   forking_server STOPFILE
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void nap(long ms) {
  struct timespec t = {0, ms * 1000 * 1000};
  nanosleep(&t, NULL);
}

static void allocate(int count) {
  for (int i = 0; i < count; i++) {
    void* p = malloc(4096 + i % 4096);
    __asm__ volatile("" : : "r"(p) : "memory");
    free(p);
  }
}

__attribute__((noinline)) void parent_site(void) { allocate(200); }
__attribute__((noinline)) void worker_site(void) { allocate(2000); }

static void work(const char* stop_file, int stays) {
  worker_site();
  while (stays && access(stop_file, F_OK) != 0) {
    nap(20);
    worker_site();
  }
  _exit(0);
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("ready\n");
  int workers = 0, failed = 0, status;
  for (; access(argv[1], F_OK) != 0; workers++) {
    pid_t child = fork();
    if (child == 0) work(argv[1], workers % 10 == 9);
    if (child < 0) failed++;
    parent_site();
    nap(20);
    while ((child = waitpid(-1, &status, WNOHANG)) > 0) failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  }
  while (wait(&status) > 0) failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  printf(failed ? "failed %d\n" : "ok %d\n", failed ? failed : workers);
  return failed != 0;
}
