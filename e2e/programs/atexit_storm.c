// Registers exit handlers before anything else allocates. From the 33rd on, libc's
// atexit allocates (calloc) while it holds its lock of exit functions: the sampled
// allocation's stack is walked inside that lock.
//   atexit_storm COUNT
#include <stdio.h>
#include <stdlib.h>

static int called;

static void handler(void) { called++; }

static void report(void) { printf("%d handlers ran\n", called); }

int main(int argc, char** argv) {
  int count = argc > 1 ? atoi(argv[1]) : 100;
  atexit(report);  // runs last
  for (int i = 0; i < count; i++) atexit(handler);
  return 0;
}
