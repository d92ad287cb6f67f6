// Makes a child without glibc's fork(), so that no pthread_atfork handler runs:
// HOW is "clone" (clone() without CLONE_VM, on a stack of its own) or "syscall"
// (syscall(SYS_fork)). Two threads of the parent allocate before and after, and
// pause while the child is made (an agent at work at that instant stays out of the
// child, which the test would take for a failure). The child
// allocates at child_site for about SECONDS seconds, then ends with exit(); the
// parent allocates at parent_site, waits for it and prints "ok".
//   raw_fork HOW SECONDS
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop, paused;
static double seconds;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void allocate(size_t size) {
  void* p = malloc(size);
  __asm__ volatile("" : : "r"(p) : "memory");
  free(p);
}

__attribute__((noinline)) void thread_site(void) { allocate(512); }
__attribute__((noinline)) void parent_site(void) { allocate(4096); }
__attribute__((noinline)) void child_site(void) { allocate(4096); }

static void* allocating_thread(void* unused) {
  (void)unused;
  while (!atomic_load(&stop)) {
    if (!atomic_load(&paused))
      for (int i = 0; i < 64; i++) thread_site();
    usleep(1000);
  }
  return NULL;
}

static int child(void* unused) {
  (void)unused;
  for (double end = now() + seconds; now() < end;)
    for (int i = 0; i < 1000; i++) child_site();
  exit(0);
}

int main(int argc, char** argv) {
  if (argc != 3) return fprintf(stderr, "usage: raw_fork clone|syscall SECONDS\n"), 2;
  seconds = atof(argv[2]);
  pthread_t threads[2];
  for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, allocating_thread, NULL);
  usleep(200000);  // the threads have sampled: the agent's writer thread runs
  atomic_store(&paused, 1);
  usleep(20000);
  pid_t pid;
  if (strcmp(argv[1], "clone") == 0) {
    size_t stack_size = 1 << 20;
    char* stack = malloc(stack_size);
    pid = clone(child, stack + stack_size, SIGCHLD, NULL);
  } else {
    pid = (pid_t)syscall(SYS_fork);
    if (pid == 0) child(NULL);
  }
  if (pid < 0) return perror("clone"), 2;
  atomic_store(&paused, 0);
  for (int i = 0; i < 20000; i++) parent_site();
  int status;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fprintf(stderr, "child failed\n"), 1;
  atomic_store(&stop, 1);
  for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
  puts("ok");
  return 0;
}
