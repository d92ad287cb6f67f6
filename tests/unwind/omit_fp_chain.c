// Built with -O2 -fomit-frame-pointer. Different stack sizes give each frame its own
// CFA offset; "+ n" after each call keeps the compiler from turning it into a jump.
#include "tests/unwind/test_chains.h"

#define CHAIN_FUNCTION __attribute__((noinline, noclone))

CHAIN_FUNCTION int omit_fp_chain_d(UnwindTestCallback callback, void* context) {
  volatile char scratch[40];
  scratch[0] = 4;
  return callback(context) + scratch[0];
}

CHAIN_FUNCTION int omit_fp_chain_c(UnwindTestCallback callback, void* context) {
  volatile char scratch[300];
  scratch[0] = 3;
  return omit_fp_chain_d(callback, context) + scratch[0];
}

CHAIN_FUNCTION int omit_fp_chain_b(UnwindTestCallback callback, void* context) {
  // rbp is saved in the prologue (its CFI says where) and is garbage below here.
  asm volatile("xorl %%ebp, %%ebp" ::: "rbp");
  return omit_fp_chain_c(callback, context) + 2;
}

CHAIN_FUNCTION int omit_fp_chain_a(UnwindTestCallback callback, void* context) {
  return omit_fp_chain_b(callback, context) + 1;
}
