/* kvsim guest start-up (SE mode, Linux riscv64 process ABI).
 *
 * Every hart enters here with all integer registers 0 except sp, which points at the Linux initial stack:
 *     0(sp) argc, 8(sp) argv[0] ... argv[argc-1], NULL, envp[0] ... NULL, auxv pairs ... AT_NULL
 * (workloads/ABI.md, "Start-up"). We set gp for linker relaxation, call main(argc, argv, envp) and end the
 * process with exit_group(main's result), as a C library's exit() would. A hart that must end alone (the other
 * harts of a multi-hart program keep running) calls hart_exit() from kvsim_libc.h instead of returning.
 */
    .section .text._start, "ax", @progbits
    .globl  _start
    .type   _start, @function
_start:
    .option push
    .option norelax
    la      gp, __global_pointer$       /* must not itself be relaxed to a gp-relative form */
    .option pop
    mv      ra, zero                    /* end of the call chain for debuggers */
    mv      s0, zero
    ld      a0, 0(sp)                   /* argc */
    addi    a1, sp, 8                   /* argv */
    slli    a2, a0, 3
    add     a2, a2, a1
    addi    a2, a2, 8                   /* envp = argv + argc + 1 */
    andi    sp, sp, -16                 /* the ABI promises 16-byte alignment; keep it true regardless */
    call    main
    li      a7, 94                      /* exit_group(main's result) */
    ecall
1:  j       1b                          /* not reached */
    .size   _start, . - _start

    .section .note.GNU-stack, "", @progbits
