#pragma once
#include <stddef.h>

// Allocates through a function of the library's own that is not exported.
void* library_alloc(size_t n);
