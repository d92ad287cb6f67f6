// A library whose constructor waits until the file named by WAITING_CONSTRUCTOR_UNTIL
// exists: the thread that dlopen()s it holds the dynamic loader's lock meanwhile.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((constructor)) static void wait_for_file(void) {
  const char* until = getenv("WAITING_CONSTRUCTOR_UNTIL");
  if (!until) return;
  printf("ready\n");
  fflush(stdout);
  while (access(until, F_OK) != 0) {
    struct timespec t = {0, 10 * 1000 * 1000};
    nanosleep(&t, NULL);
  }
}
