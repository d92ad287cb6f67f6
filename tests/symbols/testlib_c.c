// The C functions of the test library: static, global and aliased ones.
#include "testlib.h"

int c_global_function(int x) { return x + 1; }

static int c_static_function(int x) { return x + 2; }

// A weak public name for a global one with underscores: fewer underscores wins.
int __testlib_impl(int x) { return x + 3; }
extern int testlib_entry(int) __attribute__((weak, alias("__testlib_impl")));

// A local alias that sorts first: an exported name wins anyway.
int zzz_exported_target(int x) { return x + 4; }
static int aaa_local_alias(int) __attribute__((alias("zzz_exported_target"), used));

// A non-default version with no underscores beside a default one: the default wins.
int __versioned_impl(int x) { return x + 5; }
__asm__(".symver __versioned_impl, old_name@TESTLIB_1");
__asm__(".symver __versioned_impl, __new_name@@TESTLIB_2");

const void* testlib_c_function(int which) {
  switch (which) {
    case kCGlobal: return (const void*)&c_global_function;
    case kCStatic: return (const void*)&c_static_function;
    case kWeakAlias: return (const void*)&testlib_entry;
    case kLocalAlias: return (const void*)&zzz_exported_target;
    case kVersioned: return (const void*)&__versioned_impl;
    default: return 0;
  }
}
