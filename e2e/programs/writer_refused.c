// A process that may not have one more thread (RLIMIT_NPROC) when nmprof would
// start its writer thread: the main thread and one worker allocate; prints what
// each allocated. Started as root, it first becomes <uid>, under a limit of 2.
//   writer_refused <uid> <allocations>
#include <grp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "allocation_loop.h"

static long allocations;

__attribute__((noinline)) void worker_site(void) { ALLOCATE(48) }
__attribute__((noinline)) void main_site(void) { ALLOCATE(80) }

static void* worker(void* arg) {
  (void)arg;
  worker_site();
  return NULL;
}

int main(int argc, char** argv) {
  uid_t uid = (uid_t)atoi(argv[1]);
  allocations = atol(argv[2]);
  struct rlimit two = {2, 2};
  if (getuid() == 0 && (setgroups(0, NULL) != 0 || setgid(uid) != 0 || setrlimit(RLIMIT_NPROC, &two) != 0 ||
                        setuid(uid) != 0)) {
    perror("becoming the test user");
    return 2;
  }
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL) != 0) return 3;
  main_site();
  pthread_join(t, NULL);
  printf("worker_site %ld\nmain_site %ld\n", allocations, allocations);
  return 0;
}
