// Replaces its own executable and its library with other builds while it runs (a
// rename over each, as a package upgrade does), then allocates through both.
//   replaced_self NEW_PROGRAM PROGRAM NEW_LIBRARY LIBRARY
// A NEW_... of "-" leaves that file alone. Built with -DMOVED, code comes before the
// functions (replaced_library.h).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replaced_library.h"

static void* volatile sink;

CODE_AHEAD(moved_ahead)

__attribute__((noinline)) static void program_alloc(size_t n) {
  sink = calloc(1, n);
  free(sink);
}

__attribute__((noinline)) void program_exported_alloc(size_t n) {
  sink = malloc(n);
  free(sink);
}

static void replace(const char* new_file, const char* file) {
  if (strcmp(new_file, "-") != 0 && rename(new_file, file) != 0) {
    perror(new_file);
    exit(2);
  }
}

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  replace(argv[1], argv[2]);
  replace(argv[3], argv[4]);
  for (int i = 0; i < 2000; i++) {
    program_alloc(4096);
    program_exported_alloc(4096);
    free(library_alloc(4096));
  }
  return 0;
}
