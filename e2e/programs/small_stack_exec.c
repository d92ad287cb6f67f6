// Execs PROGRAM ARGS... with an empty environment, from a vfork child of a thread
// with a 16 KiB stack: the exec hook must rebuild the environment with the agent's
// variables in what little stack there is, on memory the parent shares.
//   small_stack_exec PROGRAM [ARGS...]
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static char** command;

static void* run(void* status) {
  char* empty[] = {NULL};
  pid_t pid = vfork();
  if (pid == 0) {
    execve(command[0], command, empty);
    _exit(127);
  }
  waitpid(pid, (int*)status, 0);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  command = argv + 1;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 16384);
  pthread_t thread;
  int status = 0;
  if (pthread_create(&thread, &attr, run, &status) != 0) return 1;
  pthread_join(thread, NULL);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
