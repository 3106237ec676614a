/* Explicit RVC forms, assembled as written (c.* mnemonics), called from compressed.c. Each function takes
 * inputs in a0/a1 (and a buffer in a2 where it touches memory) and returns a value that depends on every
 * instruction in it. Plain (32-bit) instructions are avoided inside the bodies except where RVC has no form. */
    .option rvc
    .text

/* long c_alu(long a, long b): c.li c.lui c.addi c.addiw c.slli c.srli c.srai c.andi c.mv c.add c.sub c.xor c.or
 * c.and c.subw c.addw c.nop c.addi16sp c.addi4spn */
    .globl c_alu
    .type c_alu, @function
c_alu:
    c.mv    a3, a0              /* a3 = a */
    c.mv    a4, a1              /* a4 = b */
    c.li    a5, -32             /* c.li range -32..31 */
    c.add   a3, a5
    c.addi  a3, 31
    c.addi  a4, -32
    c.addiw a4, 7               /* 32-bit add, sign-extended */
    c.lui   a5, 0xfffe1         /* c.lui: nzimm[17:12], sign-extended (-31 << 12) */
    c.xor   a3, a5
    c.slli  a3, 13
    c.srai  a3, 3
    c.srli  a4, 1
    c.andi  a4, -21
    c.or    a3, a4
    c.sub   a3, a4
    c.and   a4, a3
    c.subw  a4, a3
    c.addw  a3, a4
    c.nop
    c.slli  a3, 63
    c.srli  a3, 62
    c.add   a3, a0
    c.srai  a3, 63
    c.xor   a3, a0
    c.mv    a0, a3
    c.addi16sp sp, -64          /* allocate a frame with c.addi16sp, address it with c.addi4spn */
    c.addi4spn a5, sp, 16
    c.mv    a4, sp
    c.sub   a5, a4              /* a5 = 16 whatever the stack address */
    c.add   a0, a5
    c.addi16sp sp, 64
    c.lui   a5, 1
    c.addiw a5, -1              /* 0xfff */
    c.and   a5, a1
    c.add   a0, a5
    c.jr    ra
    .size c_alu, . - c_alu

/* long c_mem(long a, long *buf): c.sd c.ld c.sw c.lw on x8..x15 bases, c.sdsp c.ldsp c.swsp c.lwsp on sp */
    .globl c_mem
    .type c_mem, @function
c_mem:
    c.addi16sp sp, -48
    c.sdsp  s0, 40(sp)
    c.sdsp  s1, 32(sp)
    c.mv    s0, a1              /* s0 = buf (x8, a compressed base register) */
    c.sd    a0, 0(s0)
    c.sd    a0, 248(s0)         /* largest c.sd offset */
    c.sw    a0, 8(s0)
    c.sw    a0, 124(s0)         /* largest c.sw offset */
    c.ld    a3, 0(s0)
    c.lw    a4, 8(s0)           /* sign-extended */
    c.ld    a5, 248(s0)
    c.lw    s1, 124(s0)
    c.add   a3, a4
    c.xor   a3, a5
    c.add   a3, s1
    c.sdsp  a3, 0(sp)
    c.swsp  a0, 8(sp)
    c.swsp  a4, 12(sp)
    c.ldsp  a4, 8(sp)           /* both words back as one doubleword */
    c.lwsp  a5, 12(sp)
    c.ldsp  a2, 0(sp)
    c.xor   a2, a4
    c.add   a2, a5
    c.mv    a0, a2
    c.ldsp  s1, 32(sp)
    c.ldsp  s0, 40(sp)
    c.addi16sp sp, 48
    ret
    .size c_mem, . - c_mem

/* long c_ctrl(long n): c.beqz c.bnez c.j c.jal-free calls through c.jalr, c.jr; counts a small loop */
    .globl c_ctrl
    .type c_ctrl, @function
c_ctrl:
    c.addi16sp sp, -16
    c.sdsp  ra, 8(sp)
    c.li    a1, 0
    c.beqz  a0, 3f
1:  c.addi  a1, 3
    c.addi  a0, -1
    c.bnez  a0, 1b
3:  c.mv    a0, a1
    la      a5, c_twice
    c.jalr  a5                  /* call through a register */
    c.j     4f
    c.li    a0, 0               /* skipped */
4:  c.ldsp  ra, 8(sp)
    c.addi16sp sp, 16
    c.jr    ra
    .size c_ctrl, . - c_ctrl

c_twice:
    c.slli  a0, 1
    c.addi  a0, 1
    c.jr    ra
