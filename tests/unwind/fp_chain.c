// Built with frame pointers and without unwind tables: only the rbp chain leads through.
// C, because C++ keeps unwind tables for exceptions whatever the flags say.
#include "tests/unwind/test_chains.h"

#define CHAIN_FUNCTION __attribute__((noinline, noclone))

CHAIN_FUNCTION int fp_chain_c(UnwindTestCallback callback, void* context) { return callback(context) + 3; }
CHAIN_FUNCTION int fp_chain_b(UnwindTestCallback callback, void* context) { return fp_chain_c(callback, context) + 2; }
CHAIN_FUNCTION int fp_chain_a(UnwindTestCallback callback, void* context) { return fp_chain_b(callback, context) + 1; }
