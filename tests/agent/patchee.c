// A library whose allocations go through every kind of slot the GOT patcher
// handles: a PLT jump slot, a -fno-plt GLOB_DAT slot (patchee_noplt.c), and an
// absolute pointer in a function table.
#include <stdlib.h>

void* (*const patchee_table[])(size_t) = {malloc};

void* patchee_plt_malloc(size_t n) { return malloc(n); }
void* patchee_table_malloc(size_t n) { return patchee_table[0](n); }
void patchee_free(void* p) { free(p); }
