// Registers more exit handlers than glibc keeps in its static block: the 33rd
// registration allocates while glibc holds its exit-handler lock. Prints how many
// handlers ran at exit.
//   many_exit_handlers
#include <stdio.h>
#include <stdlib.h>

static int ran;

static void count(void) { ran++; }
static void report(void) { printf("%d handlers ran\n", ran); }

int main(void) {
  atexit(report);  // registered first: runs last
  for (int i = 0; i < 40; i++) atexit(count);
  return 0;
}
