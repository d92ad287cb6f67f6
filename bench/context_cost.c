// The cost of nmprof.h calls in ns per call: the fastest and the median of 15
// timings of N calls each (on a shared machine the fastest is the call's own cost).
//   context_cost set|attribute|clear N
// Run it plain (the calls find no agent) and under the agent (LD_PRELOAD, with
// NMPROF_OPTIONS=...,attributes=route).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nmprof.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int by_value(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const char* what = argv[1];
  long n = atol(argv[2]);
  static const char* const routes[] = {"/checkout", "/search"};
  enum { kRuns = 15 };
  double runs[kRuns];
  for (int r = 0; r < kRuns; r++) {
    double start = now();
    if (strcmp(what, "set") == 0) {
      for (long i = 0; i < n; i++) nmprof_context_set((uint64_t)i, (uint64_t)i);
    } else if (strcmp(what, "attribute") == 0) {
      for (long i = 0; i < n; i++) nmprof_context_set_attribute("route", routes[i & 1]);
    } else if (strcmp(what, "clear") == 0) {
      for (long i = 0; i < n; i++) nmprof_context_clear();
    } else {
      return 2;
    }
    runs[r] = (now() - start) / (double)n;
  }
  qsort(runs, kRuns, sizeof runs[0], by_value);
  printf("%.2f %.2f\n", runs[0], runs[kRuns / 2]);
  return 0;
}
