/* Stores to an address no range of the memory map covers (between the mmap area and the device range), at
 * the global label `fault_here`: the engine must stop with MemoryFault at that PC. */
    .text
    .globl main
main:
    li      t0, 0x2800000000
    li      t1, 0x1234
    .globl fault_here
fault_here:
    sd      t1, 0(t0)
    li      a0, 0
    ret
