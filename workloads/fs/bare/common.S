/* Console helpers of the bare-metal FS test programs: the NS16550 at 0x10000000 (qemu virt's and kvsim's). */
    .section .text
    .globl putc, puts, puthex, poweroff
/* putc(a0): one byte, after the transmitter says it is ready. Clobbers t0, t1. */
putc:
    li t0, 0x10000000
1:  lbu t1, 5(t0)
    andi t1, t1, 0x20
    beqz t1, 1b
    sb a0, 0(t0)
    ret
/* puts(a0): a NUL-terminated string. Clobbers a0, t0-t2. */
puts:
    mv t2, a0
    mv a1, ra
1:  lbu a0, 0(t2)
    beqz a0, 2f
    call putc
    addi t2, t2, 1
    j 1b
2:  mv ra, a1
    ret
/* puthex(a0): 16 hex digits and a newline. Clobbers a0-a3, t0-t1. */
puthex:
    mv a2, a0
    mv a3, ra
    li a1, 60
1:  srl a0, a2, a1
    andi a0, a0, 15
    addi a0, a0, '0'
    li t0, '9'
    ble a0, t0, 2f
    addi a0, a0, 'a' - '9' - 1
2:  call putc
    addi a1, a1, -4
    bgez a1, 1b
    li a0, '\n'
    call putc
    mv ra, a3
    ret
/* poweroff: the SiFive test device's "pass". */
poweroff:
    li t0, 0x100000
    li t1, 0x5555
    sw t1, 0(t0)
1:  j 1b
