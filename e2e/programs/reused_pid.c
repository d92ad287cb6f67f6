// Two children, one after the other, with the same pid: the first allocates at
// first_child, ends; 4 s later (its recording long written into chunks) the second is
// made to get its pid (ns_last_pid: run it as pid 1 of a pid namespace of its own) and
// allocates at second_child. Prints each site's bytes.
//   reused_pid BLOCKS
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

// `p` is used: the compiler may not elide the pair.
#define USED(p) __asm__ volatile("" : : "r"(p) : "memory")

__attribute__((noinline)) void first_child(void) {
  void* p = malloc(1000);
  USED(p);
  free(p);
}

__attribute__((noinline)) void second_child(void) {
  void* p = malloc(1000);
  USED(p);
  free(p);
}

static pid_t child(void (*site)(void), long blocks) {
  pid_t pid = fork();
  if (pid == 0) {
    for (long i = 0; i < blocks; i++) site();
    usleep(300000);
    _exit(0);
  }
  waitpid(pid, NULL, 0);
  return pid;
}

int main(int argc, char** argv) {
  long blocks = atol(argv[1]);
  pid_t first = child(first_child, blocks);
  sleep(4);
  int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
  if (fd < 0 || dprintf(fd, "%d", first - 1) < 0) {
    perror("ns_last_pid");
    return 1;
  }
  close(fd);
  pid_t second = child(second_child, blocks);
  if (second != first) {
    fprintf(stderr, "the second child got pid %d, not %d\n", second, first);
    return 1;
  }
  printf("first_child %ld\nsecond_child %ld\n", blocks * 1000, blocks * 1000);
  sleep(2);  // the second child's recording is cut into a chunk before the end
  return 0;
}
