// A server that recycles its workers, as php-fpm's pm.max_requests does: the master
// forks one worker after another; each retitles itself over its arguments (padding
// their space with NULs, as php-fpm and redis do), holds BLOCKS blocks of 64 KiB,
// frees nothing and exits. Only one worker lives at a time.
//   recycled_workers WORKERS BLOCKS
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void* volatile sink;

static void retitle(char** argv, const char* title) {
  char* end = argv[0];
  for (char** a = argv; *a; a++) end = *a + strlen(*a);
  memset(argv[0], 0, (size_t)(end - argv[0]));
  strcpy(argv[0], title);
}

__attribute__((noinline)) void worker_site(long blocks) {
  for (long i = 0; i < blocks; i++) sink = malloc(64 * 1024);
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int workers = atoi(argv[1]);
  long blocks = atol(argv[2]);
  for (int i = 0; i < workers; i++) {
    pid_t worker = fork();
    if (worker < 0) return 1;
    if (worker == 0) {
      retitle(argv, "recycled: worker");
      worker_site(blocks);
      usleep(50000);  // holds its memory a while, as a worker serving requests
      exit(0);
    }
    if (waitpid(worker, NULL, 0) != worker) return 1;
  }
  return 0;
}
