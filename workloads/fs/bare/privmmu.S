/* M-mode bare-metal test of the privileged architecture (run with qemu -bios none and kvsim's BareMachine boot):
 * traps to M with their cause and tval, M -> S -> M -> U privilege changes with mret and ecall, Sv39 translation
 * (a gigapage, a 4 KiB page three levels down, the A and D bits the hardware sets), a load page fault taken in M
 * and one delegated to S, an instruction page fault from U mode, and the M-mode timer interrupt taken from wfi.
 * Every line it prints must be identical on both machines. */
/* Continue at `label` (in M mode) after the next trap. */
    .macro resume_at label
    la t0, \label
    la t1, resume
    sd t0, 0(t1)
    .endm
/* mret into `code` at privilege `mpp` (0 = U, 1 = S). */
    .macro mret_to code, mpp
    la t0, \code
    csrw mepc, t0
    li t0, 3 << 11
    csrc mstatus, t0
    .if \mpp
    li t0, \mpp << 11
    csrs mstatus, t0
    .endif
    mret
    .endm

    .section .text.start
    .globl _start
_start:
    csrr t0, mhartid
    bnez t0, park
    la sp, stack_top
    /* One PMP region covering everything, so S and U mode may access memory (qemu enforces PMP). */
    li t0, -1
    csrw pmpaddr0, t0
    li t0, 0x1f
    csrw pmpcfg0, t0
    la a0, msg_hello
    call puts
    la t0, m_trap
    csrw mtvec, t0

    /* 1: an ecall in M mode: cause 11. */
    resume_at step2
    ecall

step2:
    /* 2: mret to S mode (bare); S says so and calls M: cause 9. */
    resume_at step3
    mret_to s_hello, 1

step3:
    /* 3: Sv39. root[0] = gigapage 0 (devices), root[2] = gigapage 0x80000000 (identity, code and data),
     * root[256] (VA 0xffffffc000000000) -> L1 -> L0[0] = the 4 KiB page `testdata`, R and W but A and D clear. */
    la s0, pagetables
    li t0, 4096 * 3
    add t1, s0, zero
1:  sd zero, 0(t1)
    addi t1, t1, 8
    addi t0, t0, -8
    bnez t0, 1b
    li t0, 0xcf                       /* V R W X A D */
    sd t0, 0(s0)
    li t0, (0x80000000 >> 12) << 10 | 0xcf
    sd t0, 16(s0)
    li t1, 4096
    add t1, s0, t1                    /* L1 */
    srli t0, t1, 12
    slli t0, t0, 10
    ori t0, t0, 1
    li t2, 256 * 8
    add t2, s0, t2
    sd t0, 0(t2)
    li t2, 8192
    add t2, s0, t2                    /* L0 */
    srli t0, t2, 12
    slli t0, t0, 10
    ori t0, t0, 1
    sd t0, 0(t1)
    la t0, testdata
    srli t0, t0, 12
    slli t0, t0, 10
    ori t0, t0, 0x07                  /* V R W */
    sd t0, 0(t2)
    srli t0, s0, 12
    li t1, 8 << 60
    or t0, t0, t1
    csrw satp, t0
    sfence.vma
    resume_at step4
    mret_to s_paged, 1

step4:
    /* The leaf PTE now has A and D set by the hardware; the store reached the physical page. */
    la a0, msg_pte
    call puts
    la t2, pagetables
    li t0, 8192
    add t2, t2, t0
    ld a0, 0(t2)
    andi a0, a0, 0xff
    call puthex
    la t0, testdata
    ld a0, 0(t0)
    call puthex
    /* 4: an S-mode load from an unmapped page: load page fault (13) in M with the address in mtval. */
    resume_at step5
    mret_to s_fault, 1

step5:
    /* 5: the same fault delegated to S (medeleg bit 13): S's handler reports it, then calls M. */
    li t0, 1 << 13
    csrw medeleg, t0
    la t0, s_trap
    csrw stvec, t0
    resume_at step6
    mret_to s_fault, 1

step6:
    csrw medeleg, zero
    /* 6: mret to U mode with translation on: U may not fetch from a page without U: instruction page fault (12). */
    resume_at step7
    mret_to u_code, 0

step7:
    /* 7: translation off, U mode runs and calls M: cause 8. */
    csrw satp, zero
    sfence.vma
    resume_at step8
    mret_to u_code, 0

step8:
    /* 8: the M-mode timer: mtimecmp = now + 50 ticks, wfi, interrupt cause 7. */
    resume_at step9
    rdtime t0
    addi t0, t0, 50
    li t1, 0x2004000
    sd t0, 0(t1)
    li t0, 1 << 7
    csrs mie, t0
    csrsi mstatus, 8
1:  wfi
    j 1b

step9:
    li t0, 1 << 7
    csrc mie, t0
    /* The interrupt came no earlier than its tick. */
    rdtime t0
    li t1, 0x2004000
    ld t1, 0(t1)
    sltu a0, t0, t1
    call puthex
    la a0, msg_done
    call puts
    call poweroff

/* M-mode trap handler: print mcause and mtval, continue at `resume` in M mode. */
    .align 2
m_trap:
    la a0, msg_trap
    call puts
    csrr a0, mcause
    call puthex
    csrr a0, mtval
    call puthex
    la t0, resume
    ld t0, 0(t0)
    jr t0

/* S-mode code (runs under M's page tables when translation is on). */
s_hello:
    la a0, msg_s
    call puts
    ecall
s_paged:
    li s1, 0xffffffc000000000
    ld a0, 0(s1)
    call puthex
    li t1, 0x1234abcd
    sd t1, 8(s1)
    ld a0, 8(s1)
    call puthex
    ecall
s_fault:
    li t0, 0xffffffc000001000
    ld a0, 0(t0)
    ecall
    .align 2
s_trap:
    la a0, msg_strap
    call puts
    csrr a0, scause
    call puthex
    csrr a0, stval
    call puthex
    ecall
u_code:
    ecall

park:
    wfi
    j park

    .section .rodata
msg_hello: .asciz "privmmu: M mode\n"
msg_trap:  .asciz "M trap: mcause, mtval\n"
msg_strap: .asciz "S trap: scause, stval\n"
msg_s:     .asciz "in S mode\n"
msg_pte:   .asciz "leaf PTE bits, data\n"
msg_done:  .asciz "privmmu: done\n"

    .section .data
    .align 12
testdata:
    .dword 0x0123456789abcdef
    .dword 0
    .align 12
resume:
    .dword 0
    .align 4
    .space 4096
stack_top:
