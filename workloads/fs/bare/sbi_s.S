/* S-mode bare-metal test of the SBI firmware (kvsim's, or OpenSBI under qemu's default firmware): base probes,
 * hart state, the timer interrupt through set_timer, an IPI to itself, a remote fence, and system reset. Every
 * line from "sbi: S mode" on must be identical on both machines. */
    .section .text.start
    .globl _start
_start:
    la sp, stack_top
    la a0, msg_hello
    call puts
    la t0, s_trap
    csrw stvec, t0

    /* Base: probe_extension(TIME) = 1, probe_extension(0x12345678) = 0. */
    li a7, 0x10
    li a6, 3
    li a0, 0x54494D45
    ecall
    call print_ret
    li a7, 0x10
    li a6, 3
    li a0, 0x12345678
    ecall
    call print_ret
    /* HSM: hart 0 is started (0); hart 7 does not exist (invalid parameter, -3). */
    li a7, 0x48534D
    li a6, 2
    li a0, 0
    ecall
    call print_ret
    li a7, 0x48534D
    li a6, 2
    li a0, 7
    ecall
    call print_ret
    /* An unknown function of a known extension: not supported (-2). */
    li a7, 0x54494D45
    li a6, 9
    ecall
    call print_ret

    /* TIME: set_timer(now + 100), wait with wfi: supervisor timer interrupt. */
    la t0, after_timer
    la t1, resume
    sd t0, 0(t1)
    li t0, 1 << 5
    csrs sie, t0
    rdtime a0
    addi a0, a0, 100
    li a7, 0x54494D45
    li a6, 0
    ecall
    csrsi sstatus, 2
1:  wfi
    j 1b
after_timer:
    li t0, 1 << 5
    csrc sie, t0

    /* IPI to itself (hart mask 1, base 0): supervisor software interrupt. */
    la t0, after_ipi
    la t1, resume
    sd t0, 0(t1)
    li t0, 1 << 1
    csrs sie, t0
    csrsi sstatus, 2
    li a7, 0x735049
    li a6, 0
    li a0, 1
    li a1, 0
    ecall
1:  wfi
    j 1b
after_ipi:
    /* RFENCE: remote sfence.vma of everything on hart 0. */
    li a7, 0x52464E43
    li a6, 1
    li a0, 1
    li a1, 0
    li a2, 0
    li a3, -1
    ecall
    call print_ret
    la a0, msg_done
    call puts
    /* SRST: shutdown. */
    li a7, 0x53525354
    li a6, 0
    li a0, 0
    li a1, 0
    ecall
    la a0, msg_alive
    call puts
1:  j 1b

/* Print an SBI call's a0 (error) and a1 (value). */
print_ret:
    mv s1, ra
    mv s2, a1
    call puthex
    mv a0, s2
    call puthex
    mv ra, s1
    ret

    .align 2
s_trap:
    la a0, msg_trap
    call puts
    csrr a0, scause
    call puthex
    csrr t0, scause
    li t1, 0x8000000000000005
    bne t0, t1, 1f
    /* Timer: push the next event out of reach (which also clears STIP). */
    li a7, 0x54494D45
    li a6, 0
    li a0, -1
    ecall
    j 2f
1:  li t0, 1 << 1
    csrc sip, t0
    csrc sie, t0
2:  la t0, resume
    ld t0, 0(t0)
    jr t0

    .section .rodata
msg_hello: .asciz "sbi: S mode\n"
msg_trap:  .asciz "S trap: scause\n"
msg_done:  .asciz "sbi: done\n"
msg_alive: .asciz "sbi: system reset returned\n"

    .section .data
    .align 4
resume:
    .dword 0
    .space 4096
stack_top:
