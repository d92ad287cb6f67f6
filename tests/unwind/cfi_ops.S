/* Frames with hand-written CFI, for the call frame instructions compilers rarely
   emit. Each function is int f(UnwindTestCallback callback, void* context) and calls
   callback(context) with the stack 16-byte aligned. Raw DW_CFA bytes go through
   .cfi_escape: 0x11 offset_extended_sf, 0x12 def_cfa_sf, 0x13 def_cfa_offset_sf,
   0x2e GNU_args_size, 0x06 restore_extended, 0x0f def_cfa_expression. */

        .text

/* A classic rbp frame whose early exit is wrapped in remember/restore_state: the
   rule at the call is right only if restore_state brings the rbp-based CFA back. */
        .globl  cfi_ops_rbp_frame
        .type   cfi_ops_rbp_frame, @function
cfi_ops_rbp_frame:
        .cfi_startproc
        pushq   %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        movq    %rsp, %rbp
        .cfi_def_cfa_register %rbp
        subq    $4096, %rsp
        testq   %rdi, %rdi
        jnz     1f
        .cfi_remember_state
        leave
        .cfi_def_cfa %rsp, 8
        .cfi_restore %rbp
        xorl    %eax, %eax
        ret
1:
        .cfi_restore_state
        movq    %rdi, %rax
        movq    %rsi, %rdi
        call    *%rax
        leave
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_endproc
        .size   cfi_ops_rbp_frame, .-cfi_ops_rbp_frame

/* Signed-offset forms, rules for registers the walker does not track, a zeroed rbp
   that only its saved slot restores, and code gaps that make gas emit advance_loc2
   and advance_loc4. */
        .globl  cfi_ops_signed_offsets
        .type   cfi_ops_signed_offsets, @function
cfi_ops_signed_offsets:
        .cfi_startproc
        pushq   %rbx
        .cfi_escape 0x13, 0x7e                  /* CFA offset -2 * -8 = 16 */
        .cfi_escape 0x11, 0x03, 0x02            /* rbx at CFA + 2 * -8 */
        pushq   %rbp
        .cfi_escape 0x12, 0x07, 0x7d            /* CFA = rsp + 24 */
        .cfi_escape 0x11, 0x06, 0x03            /* rbp at CFA + 3 * -8 */
        subq    $8, %rsp
        .cfi_def_cfa_offset 32
        .cfi_escape 0x2e, 0x08                  /* GNU_args_size 8 */
        .cfi_escape 0x00                        /* nop */
        .cfi_register %r12, %r13
        .cfi_undefined %r14
        .cfi_same_value %r15
        .cfi_escape 0x14, 0x0c, 0x02            /* val_offset r12 */
        .cfi_escape 0x15, 0x0c, 0x7f            /* val_offset_sf r12 */
        .cfi_escape 0x10, 0x0d, 0x02, 0x77, 0x00 /* expression r13: DW_OP_breg7 0 */
        .cfi_escape 0x16, 0x0d, 0x02, 0x77, 0x00 /* val_expression r13 */
        .cfi_escape 0x2f, 0x0e, 0x01            /* GNU_negative_offset_extended r14 */
        xorl    %ebp, %ebp
        movq    %rdi, %rax
        movq    %rsi, %rdi
        jmp     2f
        .skip   300, 0xcc
2:
        .cfi_escape 0x2e, 0x00                  /* GNU_args_size 0, after advance_loc2 */
        call    *%rax
        jmp     3f
        .skip   70000, 0xcc
3:
        addq    $8, %rsp
        .cfi_escape 0x13, 0x7d                  /* after advance_loc4: CFA offset 24 */
        popq    %rbp
        .cfi_escape 0x06, 0x06                  /* restore_extended rbp */
        .cfi_def_cfa_offset 16
        popq    %rbx
        .cfi_restore %rbx
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size   cfi_ops_signed_offsets, .-cfi_ops_signed_offsets

/* Marks itself the outermost frame, as _start and thread entry points do. */
        .globl  cfi_ops_outermost
        .type   cfi_ops_outermost, @function
cfi_ops_outermost:
        .cfi_startproc
        .cfi_undefined %rip
        subq    $8, %rsp
        .cfi_adjust_cfa_offset 8
        movq    %rdi, %rax
        movq    %rsi, %rdi
        call    *%rax
        addq    $8, %rsp
        .cfi_adjust_cfa_offset -8
        ret
        .cfi_endproc
        .size   cfi_ops_outermost, .-cfi_ops_outermost

/* CFA = rbp + 16 written as DW_OP_breg6 16: not a form the table keeps, so the walker
   must fall back to the frame pointer this function maintains. */
        .globl  cfi_ops_cfa_expression
        .type   cfi_ops_cfa_expression, @function
cfi_ops_cfa_expression:
        .cfi_startproc
        pushq   %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        movq    %rsp, %rbp
        .cfi_escape 0x0f, 0x02, 0x76, 0x10
        movq    %rdi, %rax
        movq    %rsi, %rdi
        call    *%rax
        popq    %rbp
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_endproc
        .size   cfi_ops_cfa_expression, .-cfi_ops_cfa_expression

/* Ends with its call, as code calling a noreturn function does: the return address
   is the first byte of the next function, so only a lookup at pc - 1 finds this
   function's rule. Its callback must not return (the test longjmps out). */
        .globl  cfi_ops_call_at_end
        .type   cfi_ops_call_at_end, @function
cfi_ops_call_at_end:
        .cfi_startproc
        subq    $24, %rsp
        .cfi_def_cfa_offset 32
        movq    %rdi, %rax
        movq    %rsi, %rdi
        call    *%rax
        .cfi_endproc
        .size   cfi_ops_call_at_end, .-cfi_ops_call_at_end

        .type   cfi_ops_after_call_at_end, @function
cfi_ops_after_call_at_end:
        .cfi_startproc
        ud2
        .cfi_endproc
        .size   cfi_ops_after_call_at_end, .-cfi_ops_after_call_at_end

        .section .note.GNU-stack,"",@progbits
