// Allocates from a signal handler: a 1 ms timer interrupts a loop of mallocs and
// frees, and the handler mallocs and frees too (not async-signal-safe by POSIX, but
// glibc programs do it, and a profiler must not turn it into a deadlock).
//   signal_malloc [milliseconds]
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile sig_atomic_t handled;
static void* volatile sink;

static void on_timer(int signal) {
  (void)signal;
  void* p = malloc(200 + handled % 3000);
  if (p) memset(p, 1, 200);
  free(p);
  handled++;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  double seconds = (argc > 1 ? atoi(argv[1]) : 500) / 1000.0;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_timer;
  action.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &action, NULL);
  struct itimerval every_ms = {{0, 1000}, {0, 1000}};
  setitimer(ITIMER_REAL, &every_ms, NULL);
  long loops = 0;
  for (double end = now() + seconds; now() < end; loops++) {
    sink = malloc(16 + loops % 5000);
    free(sink);
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("%s\n", handled > 10 && loops > 1000 ? "ok" : "too few signals or loops");
  return 0;
}
