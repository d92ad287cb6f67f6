// The target for bench/ptrace_attach.py: a malloc/free loop (random sizes 16 B -
// 4 KiB) that prints, per 100 ms window, its pairs per CPU second (the machine's
// load does not count) and the longest wall-clock gap between two iterations (how
// long nmprof stopped it, when it attached).
//   attach_throughput SECONDS   ->  lines "<window start s> <pairs per cpu s> <longest gap us>"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double clock_seconds(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static double now(void) { return clock_seconds(CLOCK_MONOTONIC); }

int main(int argc, char** argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 9;
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("ready\n");
  uint64_t state = 88172645463325252ull;
  void* slots[256] = {0};
  double start = now(), window = start, last = start, longest = 0;
  double cpu_window = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
  unsigned long pairs = 0;
  for (;;) {
    for (int i = 0; i < 64; i++) {
      state ^= state << 13, state ^= state >> 7, state ^= state << 17;
      unsigned slot = state & 255;
      free(slots[slot]);
      slots[slot] = malloc(16 + (state >> 8) % 4080);
    }
    pairs += 64;
    double t = now();
    if (t - last > longest) longest = t - last;
    last = t;
    if (t - window >= 0.1) {
      double cpu = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
      printf("%.1f %.0f %.0f\n", window - start, pairs / (cpu - cpu_window), longest * 1e6);
      pairs = 0, longest = 0, window = t, cpu_window = cpu;
      if (t - start >= seconds) break;
    }
  }
  return 0;
}
