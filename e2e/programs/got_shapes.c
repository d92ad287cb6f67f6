// Calls every hooked allocation function once with its own size and frees what it
// got, directly or (built with -DTAKE_ADDRESSES) through pointers the program takes
// in its code: in a non-PIE executable that makes each function's PLT entry its
// canonical address, which libc's own slots then point at (Debian's python3 is built
// so). Built in every GOT shape by test_got_shapes.py.
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TAKE_ADDRESSES
// Each function's address, stored by code (an absolute relocation in a non-PIE
// executable) and read back where the compiler cannot see which it is.
#define FUNCTIONS(X) \
  X(malloc) X(calloc) X(realloc) X(reallocarray) X(posix_memalign) X(aligned_alloc) X(memalign) X(valloc) \
  X(pvalloc) X(free)
#define POINTER(f) static __typeof__(&f) volatile pointer_to_##f;
FUNCTIONS(POINTER)
#define TAKE(f) pointer_to_##f = f;
#define CALL(f) pointer_to_##f
#else
#define CALL(f) f
#endif

int main(void) {
#ifdef TAKE_ADDRESSES
  FUNCTIONS(TAKE)
#endif
  void* blocks[11];
  blocks[0] = CALL(malloc)(1111);
  blocks[1] = CALL(calloc)(3, 777);
  blocks[2] = CALL(realloc)(NULL, 2222);
  blocks[3] = CALL(reallocarray)(NULL, 5, 999);
  blocks[4] = NULL;
  if (CALL(posix_memalign)(&blocks[4], 64, 3333) != 0) return 1;
  blocks[5] = CALL(aligned_alloc)(64, 4416);
  blocks[6] = CALL(memalign)(128, 5555);
  blocks[7] = CALL(valloc)(6666);
  blocks[8] = CALL(pvalloc)(7777);
  static char text[8888];
  memset(text, 'x', sizeof text - 1);
  blocks[9] = strdup(text);  // inside libc, through libc's own slot for malloc
  blocks[10] = CALL(realloc)(CALL(malloc)(100), 12345);
  for (int i = 0; i < 11; i++) {
    if (!blocks[i]) return 2;
    CALL(free)(blocks[i]);
  }
  // Addresses compare as they would without nmprof.
  printf("%s\n", (void*)CALL(malloc) == (void*)malloc ? "same malloc" : "two mallocs");
  return 0;
}
