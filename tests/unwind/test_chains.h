// Functions of the unwind test libraries. Each calls the next of its chain and the
// last one calls `callback(context)`, so a walk taken in the callback must pass
// through all of them.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*UnwindTestCallback)(void* context);

// libnmprof_test_omit_fp.so: -O2 -fomit-frame-pointer, only CFI describes the frames.
// a -> b -> c -> d -> callback; b zeroes rbp, which only its CFI can restore.
int omit_fp_chain_a(UnwindTestCallback callback, void* context);
int omit_fp_chain_b(UnwindTestCallback callback, void* context);
int omit_fp_chain_c(UnwindTestCallback callback, void* context);
int omit_fp_chain_d(UnwindTestCallback callback, void* context);

// libnmprof_test_fp_only.so: frame pointers and no unwind tables.
// a -> b -> c -> callback.
int fp_chain_a(UnwindTestCallback callback, void* context);
int fp_chain_b(UnwindTestCallback callback, void* context);
int fp_chain_c(UnwindTestCallback callback, void* context);

// libnmprof_test_cfi_ops.so (cfi_ops.S): hand-written frames, each calling the callback.
int cfi_ops_rbp_frame(UnwindTestCallback callback, void* context);       // remember/restore_state
int cfi_ops_signed_offsets(UnwindTestCallback callback, void* context);  // *_sf ops, advance_loc2/4, ...
int cfi_ops_outermost(UnwindTestCallback callback, void* context);       // return address undefined
int cfi_ops_cfa_expression(UnwindTestCallback callback, void* context);  // CFA as a DWARF expression
int cfi_ops_call_at_end(UnwindTestCallback callback, void* context);     // callback must not return
#ifdef __cplusplus
}
#endif
