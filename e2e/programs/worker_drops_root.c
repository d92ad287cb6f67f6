// A server's shape: started as root, the master forks a worker that becomes another
// user (setgid, setuid) before it does its work; both allocate and print what.
//   worker_drops_root <uid> <allocations>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "allocation_loop.h"

static long allocations;

__attribute__((noinline)) void worker_site(void) { ALLOCATE(4096) }
__attribute__((noinline)) void master_site(void) { ALLOCATE(2048) }

int main(int argc, char** argv) {
  uid_t uid = (uid_t)atoi(argv[1]);
  allocations = atol(argv[2]);
  pid_t worker = fork();
  if (worker == 0) {
    if (setgroups(0, NULL) != 0 || setgid(uid) != 0 || setuid(uid) != 0) {
      perror("becoming the worker's user");
      _exit(2);
    }
    worker_site();
    exit(0);
  }
  master_site();
  int status;
  if (worker < 0 || waitpid(worker, &status, 0) != worker || status != 0) return 3;
  printf("worker_site %ld\nmaster_site %ld\n", allocations, allocations);
  return 0;
}
