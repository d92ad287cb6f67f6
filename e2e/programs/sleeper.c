// Allocates, says so on stdout, then waits to be killed.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void* volatile keep;

__attribute__((noinline)) void before_sleep_site(void) {
  for (int i = 0; i < 1000; i++) {
    keep = malloc(50000);
    free(keep);
  }
}

int main(void) {
  before_sleep_site();
  printf("ready\n");
  fflush(stdout);
  for (;;) pause();
}
