/* Every RV64A instruction written out, with each ordering variant (none, .aq, .rl, .aqrl) used somewhere.
 *
 *   long amo_all_w(int32_t *p, long v, long *out)   runs the nine .w AMOs on *p in turn; out[i] = old value
 *   long amo_all_d(int64_t *p, long v, long *out)   the same for the nine .d AMOs
 *   long lrsc_sum_d(int64_t *p, long n)             adds 1..n to *p with an lr.d/sc.d loop; returns failures
 *   long lrsc_sum_w(int32_t *p, long n)             the same with lr.w/sc.w (the sum wraps at 32 bits)
 *   long sc_no_reservation(int64_t *p)              an SC right after a successful SC (its reservation is gone)
 *                                                   must fail: returns the two SC results (first << 1 | second)
 *   long lr_w_sign(int32_t *p)                      lr.w sign-extends
 */
    .text
    .globl amo_all_w
amo_all_w:
    amoswap.w   t0, a1, (a0)
    sd          t0, 0(a2)
    amoadd.w.aq t0, a1, (a0)
    sd          t0, 8(a2)
    amoxor.w.rl t0, a1, (a0)
    sd          t0, 16(a2)
    amoand.w.aqrl t0, a1, (a0)
    sd          t0, 24(a2)
    amoor.w     t0, a1, (a0)
    sd          t0, 32(a2)
    amomin.w    t0, a1, (a0)
    sd          t0, 40(a2)
    amomax.w.aq t0, a1, (a0)
    sd          t0, 48(a2)
    amominu.w.rl t0, a1, (a0)
    sd          t0, 56(a2)
    amomaxu.w.aqrl t0, a1, (a0)
    sd          t0, 64(a2)
    amoadd.w    zero, a1, (a0)      /* rd = x0: the memory update still happens */
    lw          a0, 0(a0)
    ret

    .globl amo_all_d
amo_all_d:
    amoswap.d.aqrl t0, a1, (a0)
    sd          t0, 0(a2)
    amoadd.d    t0, a1, (a0)
    sd          t0, 8(a2)
    amoxor.d.aq t0, a1, (a0)
    sd          t0, 16(a2)
    amoand.d.rl t0, a1, (a0)
    sd          t0, 24(a2)
    amoor.d.aqrl t0, a1, (a0)
    sd          t0, 32(a2)
    amomin.d    t0, a1, (a0)
    sd          t0, 40(a2)
    amomax.d    t0, a1, (a0)
    sd          t0, 48(a2)
    amominu.d.aq t0, a1, (a0)
    sd          t0, 56(a2)
    amomaxu.d.rl t0, a1, (a0)
    sd          t0, 64(a2)
    amoxor.d    zero, a1, (a0)
    ld          a0, 0(a0)
    ret

    .globl lrsc_sum_d
lrsc_sum_d:
    li          t2, 0               /* failures */
    li          t3, 1               /* i */
1:  bgt         t3, a1, 3f
2:  lr.d.aq     t0, (a0)
    add         t0, t0, t3
    sc.d.rl     t1, t0, (a0)
    add         t2, t2, t1
    bnez        t1, 2b
    addi        t3, t3, 1
    j           1b
3:  mv          a0, t2
    ret

    .globl lrsc_sum_w
lrsc_sum_w:
    li          t2, 0
    li          t3, 1
1:  bgt         t3, a1, 3f
2:  lr.w        t0, (a0)
    addw        t0, t0, t3
    sc.w.aqrl   t1, t0, (a0)
    add         t2, t2, t1
    bnez        t1, 2b
    addi        t3, t3, 1
    j           1b
3:  mv          a0, t2
    ret

    .globl sc_no_reservation
sc_no_reservation:
    lr.d        t0, (a0)
    addi        t0, t0, 1
    sc.d        t1, t0, (a0)        /* succeeds: 0 */
    addi        t0, t0, 1
    sc.d        t2, t0, (a0)        /* no reservation any more: fails (non-zero), memory unchanged */
    snez        t2, t2
    slli        a0, t1, 1
    or          a0, a0, t2
    ret

    .globl lr_w_sign
lr_w_sign:
    lr.w.aqrl   a0, (a0)
    ret
