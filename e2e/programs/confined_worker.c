// A process that confines itself before it allocates, in the ways services do:
//   confined_worker work N              allocates (worker_site) and exits
//   confined_worker exec-as UID N       forks a child that becomes UID (setuid) and
//                                       execs `confined_worker work N`
//   confined_worker raw-setuid UID N    forks a child that becomes UID by raw system
//                                       calls (no libc wrapper sees it) and allocates
//   confined_worker chroot DIR N        chroots into DIR, then allocates and forks a
//                                       child that allocates
// Each process prints nothing but the parent's "done".
#define _GNU_SOURCE
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "allocation_loop.h"

static long allocations;

__attribute__((noinline)) void worker_site(void) { ALLOCATE(4096) }

static int wait_for(pid_t child) {
  int status;
  return waitpid(child, &status, 0) == child && WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

int main(int argc, char** argv) {
  const char* how = argc > 1 ? argv[1] : "";
  allocations = atol(argv[argc - 1]);
  if (strcmp(how, "work") == 0) {
    worker_site();
    return 0;
  }
  if (strcmp(how, "chroot") == 0) {
    if (chroot(argv[2]) != 0 || chdir("/") != 0) return perror("chroot"), 2;
    worker_site();
    pid_t child = fork();
    if (child == 0) {
      worker_site();
      exit(0);
    }
    if (wait_for(child) != 0) return 3;
  } else {
    uid_t uid = (uid_t)atoi(argv[2]);
    pid_t child = fork();
    if (child == 0) {
      if (strcmp(how, "raw-setuid") == 0) {
        if (syscall(SYS_setgroups, 0, NULL) != 0 || syscall(SYS_setgid, uid) != 0 || syscall(SYS_setuid, uid) != 0)
          _exit(2);
        worker_site();
        exit(0);
      }
      if (setgroups(0, NULL) != 0 || setgid(uid) != 0 || setuid(uid) != 0) _exit(2);
      execl("/proc/self/exe", argv[0], "work", argv[3], (char*)NULL);
      _exit(127);
    }
    if (wait_for(child) != 0) return 3;
  }
  printf("done\n");
  return 0;
}
