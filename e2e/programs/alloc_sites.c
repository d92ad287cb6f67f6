// Calls every hooked allocation function once, each from its own function and with
// its own size, so a test can check size and call site of every one.
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void* volatile sink[16];

#define SITE __attribute__((noinline)) void

SITE site_malloc(void) { sink[0] = malloc(1111); }
SITE site_calloc(void) { sink[1] = calloc(3, 777); }
SITE site_realloc(void) { sink[2] = realloc(NULL, 2222); }
SITE site_reallocarray(void) { sink[3] = reallocarray(NULL, 5, 999); }
SITE site_posix_memalign(void) {
  void* p = NULL;
  if (posix_memalign(&p, 64, 3333) == 0) sink[4] = p;
}
SITE site_aligned_alloc(void) { sink[5] = aligned_alloc(64, 4416); }
SITE site_memalign(void) { sink[6] = memalign(128, 5555); }
SITE site_valloc(void) { sink[7] = valloc(6666); }
SITE site_pvalloc(void) { sink[8] = pvalloc(7777); }
SITE site_strdup(void) {
  static char text[8888];
  memset(text, 'x', sizeof text - 1);
  sink[9] = strdup(text);
}

int main(void) {
  site_malloc();
  site_calloc();
  site_realloc();
  site_reallocarray();
  site_posix_memalign();
  site_aligned_alloc();
  site_memalign();
  site_valloc();
  site_pvalloc();
  site_strdup();
  puts("done");
  return 0;
}
