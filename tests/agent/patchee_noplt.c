// Calls malloc through a GLOB_DAT slot (compiled with -fno-plt).
#include <stdlib.h>

void* patchee_noplt_malloc(size_t n) { return malloc(n); }
