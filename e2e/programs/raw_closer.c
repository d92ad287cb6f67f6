// Closes every descriptor from 3 up with raw close system calls, which no hook of
// the agent's sees, between two phases of allocations that are each written to the
// recording (a second apart). HOW "reopen": nothing else; "exhaust": the program
// then lowers its RLIMIT_NOFILE and takes every number below it, so that the agent
// cannot open its file again. Prints "ok".
//   raw_closer reopen|exhaust
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static void allocate(int count) {
  for (int i = 0; i < count; i++) {
    void* p = malloc(4096);
    __asm__ volatile("" : : "r"(p) : "memory");
    free(p);
  }
}

__attribute__((noinline)) void before_site(void) { allocate(4000); }
__attribute__((noinline)) void after_site(void) { allocate(4000); }
// A sample a second after the last write has the recording written.
__attribute__((noinline)) void write_trigger(void) {
  usleep(1100000);
  allocate(400);
}

int main(int argc, char** argv) {
  if (argc != 2) return fprintf(stderr, "usage: raw_closer reopen|exhaust\n"), 2;
  before_site();
  write_trigger();
  for (int fd = 3; fd < 65536; fd++) syscall(SYS_close, fd);
  if (strcmp(argv[1], "exhaust") == 0) {
    struct rlimit limit = {64, 64};
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return perror("setrlimit"), 2;
    while (open("/dev/null", O_RDONLY) >= 0) {
    }
  }
  after_site();
  write_trigger();
  puts("ok");
  return 0;
}
