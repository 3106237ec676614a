/* Never ends: a run with System.max_insts must stop with stop_reason "max_insts". */
    .text
    .globl main
main:
    li      a0, 0
1:  addi    a0, a0, 1
    j       1b
