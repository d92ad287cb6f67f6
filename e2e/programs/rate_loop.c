// Allocates for a fixed wall-clock time, steadily or in bursts of different speeds:
// under --rate, the samples recorded must be about rate * seconds either way.
//   rate_loop steady|bursty SECONDS
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static void fast_burst(void) {
  for (int i = 0; i < 1000; i++) {
    void* p = malloc(64);
    __asm__ volatile("" : : "r"(p) : "memory");
    free(p);
  }
}

// Fewer bytes per second by far: larger blocks, written, with pauses.
__attribute__((noinline)) static void slow_burst(void) {
  for (int i = 0; i < 10; i++) {
    char* p = malloc(4096);
    memset(p, i, 4096);
    free(p);
  }
  struct timespec pause = {0, 200000};
  nanosleep(&pause, NULL);
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int bursty = strcmp(argv[1], "bursty") == 0;
  double end = now() + atof(argv[2]);
  for (double t = now(); t < end; t = now()) {
    int slow = bursty && ((long)(t * 4) % 2);  // alternate every 250 ms
    if (slow)
      slow_burst();
    else
      fast_burst();
  }
  return 0;
}
