/* Calls system call number 4660 (0x1234), which Linux riscv64 does not have: the engine must stop with
 * UnsupportedSyscall at the ecall labelled `ecall_here`. */
    .text
    .globl main
main:
    li      a7, 0x1234
    li      a0, 7
    .globl ecall_here
ecall_here:
    ecall
    li      a0, 0
    ret
