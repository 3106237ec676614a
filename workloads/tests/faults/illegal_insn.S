/* Executes an instruction word that RV64IMAC does not define (custom-0 major opcode 0x0b) at the global label
 * `illegal_here`: the engine must stop with IllegalInstruction naming that PC and the word 0xdeadb00b. */
    .text
    .globl main
main:
    li      a0, 1
    .globl illegal_here
illegal_here:
    .4byte  0xdeadb00b
    li      a0, 0
    ret
