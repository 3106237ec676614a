"""Random privileged and MMU instruction sequences for FS mode, compared with qemu-system-riscv64 (-bios none).

One bare-metal M-mode program (linked with workloads/fs/bare/link.ld and common.S) runs many *segments*. Each
segment, from M mode:
  1. sets a random protection for each of eight 4 KiB test pages (the leaf PTEs' V, R, W, X, U, A and D bits) and
     turns Sv39 on (a random ASID) or off, then sfence.vma; delegates a random subset of the illegal-instruction and
     page-fault exceptions to S (medeleg); sets mstatus.SUM and MXR at random, sscratch and the working registers to
     random values;
  2. enters a random body with mret, in S or U mode: integer ALU and multiply/divide instructions, loads, stores
     and AMOs on the test pages (which fault or set the PTEs' A and D bits as their protection says), S-level CSR
     reads and writes (illegal in U), M-level CSR reads, mret/sret where they are illegal, sfence.vma, wfi in U,
     ebreak and fences; the body ends with an ecall back to M mode;
  3. prints (UART) the working registers, the S handler's record of the traps it took, sscratch, the leaf PTEs and a
     checksum of each test page.
M mode's trap handler prints every trap it takes (mcause, mtval, mepc) and resumes after the faulting instruction;
S mode's handler folds scause and stval into s11 and does the same. The console output of the whole program must
be identical on both machines.

Memory: the Sv39 root maps VA 0x80000000 (1 GiB, identity, not U: S code and data, the handlers), VA 0xC0000000
onto the same physical gigapage with U set (the bodies U runs with translation on: VA = PA + 0x40000000), and
VA 0x40000000 through an L1 and an L0 table onto the eight test pages. Without translation the bodies reach the
test pages at their physical addresses. Registers: s2..s8 and a4..a7 are the random working set, s9 the address
temporary, s10 the test pages' base in the body's address space, s11 the S handler's record.

Usable as a script too:  python tests/fs_random.py --seed 3 --segments 40 -o /tmp/r.S
"""

from __future__ import annotations

import argparse
import random

WORK = ["s2", "s3", "s4", "s5", "s6", "s7", "s8", "a4", "a5", "a6", "a7"]
PAGES = 8
TEST_VA = 0x4000_0000
U_ALIAS = 0x4000_0000          # VA 0xC0000000 = PA 0x80000000 + this, with U set
# PTE bits.
V, R, W, X, U, G, A, D = (1 << i for i in range(8))
# Exceptions a segment may delegate to S: illegal instruction, instruction, load and store/AMO page faults.
DELEGABLE = [2, 12, 13, 15]
SUM, MXR = 1 << 18, 1 << 19

ALU_R = ["add", "sub", "xor", "or", "and", "sll", "srl", "sra", "slt", "sltu", "addw", "subw", "sllw", "srlw",
         "sraw", "mul", "mulh", "mulhu", "mulw", "div", "divu", "rem", "remu", "divw", "remw"]
ALU_I = ["addi", "xori", "ori", "andi", "slti", "sltiu", "addiw"]
SHIFT_I = ["slli", "srli", "srai"]
LOADS = [("ld", 8), ("lw", 4), ("lwu", 4), ("lh", 2), ("lhu", 2), ("lb", 1), ("lbu", 1)]
STORES = [("sd", 8), ("sw", 4), ("sh", 2), ("sb", 1)]
AMOS = [("amoadd.d", 8), ("amoswap.d", 8), ("amoor.w", 4), ("amoxor.w", 4)]
S_CSRS = ["sscratch", "sepc", "scause", "stval", "satp", "sie", "sip"]
M_CSRS = ["mscratch", "mepc", "medeleg", "mstatus"]


def random_value(rng: random.Random) -> int:
    return rng.choice([0, 1, -1, 0x7fff_ffff, -0x8000_0000, 0x8000_0000_0000_0000 - 1, rng.getrandbits(64),
                       rng.getrandbits(12), rng.getrandbits(32)])


def amo_succeeds(bits: int, user: bool, status: int) -> bool:
    """Whether an AMO at this level passes the leaf PTE's checks (Sv39; the A and D bits the hardware sets): the
    page readable and writable at this level."""
    if not bits & V or not bits & W or not bits & R:
        return False
    return bool(bits & U) == user or (not user and bits & U and status & SUM)


def memory_access(rng: random.Random, amo_pages: list[int]) -> list[str]:
    """An access to a random test page at an aligned offset: the address into s9, then the access. AMOs go only to
    `amo_pages`, where they succeed: qemu 7.2 checks an AMO's page first as a load's (a load page fault for a page
    it may not read, and the A bit set for one it may read but not write), where the privileged architecture (and
    kvsim) check it as a store's (a store/AMO page fault, the PTE untouched)."""
    kind = rng.choice(["load", "load", "store", "store"] + (["amo"] if amo_pages else []))
    op, size = rng.choice({"load": LOADS, "store": STORES, "amo": AMOS}[kind])
    page = rng.choice(amo_pages) if kind == "amo" else rng.randrange(PAGES)
    offset = page * 4096 + rng.randrange(0, 4096 // size) * size
    setup = [f"li s9, {offset}", "add s9, s9, s10"]
    reg = rng.choice(WORK)
    if kind == "amo":
        return setup + [f"{op} {reg}, {rng.choice(WORK)}, (s9)"]
    return setup + [f"{op} {reg}, 0(s9)"]


def body_instruction(rng: random.Random, user: bool, amo_pages: list[int]) -> list[str]:
    pick = rng.random()
    a, b, c = (rng.choice(WORK) for _ in range(3))
    if pick < 0.30:
        return [f"{rng.choice(ALU_R)} {a}, {b}, {c}"]
    if pick < 0.40:
        return [f"{rng.choice(ALU_I)} {a}, {b}, {rng.randrange(-2048, 2048)}"]
    if pick < 0.45:
        return [f"{rng.choice(SHIFT_I)} {a}, {b}, {rng.randrange(64)}"]
    if pick < 0.70:
        return memory_access(rng, amo_pages)
    if pick < 0.80:
        csr = rng.choice(S_CSRS)
        # Read only: sip and sie (a write could make an interrupt pending, whose timing the machines need not
        # share), satp, and sepc, whose bit 0 the privileged architecture (and kvsim) keep zero and qemu 7.2 keeps
        # as written.
        if csr in ("sip", "sie", "satp", "sepc") or rng.random() < 0.5:
            return [f"csrr {a}, {csr}"]
        return [rng.choice([f"csrw {csr}, {b}", f"csrrs {a}, {csr}, {b}", f"csrrc {a}, {csr}, {b}",
                            f"csrrw {a}, {csr}, {b}"])]
    if pick < 0.84:
        return [f"csrr {a}, {rng.choice(M_CSRS)}"]         # illegal below M mode
    if pick < 0.90:
        return [rng.choice(["sfence.vma", f"sfence.vma {a}", f"sfence.vma {a}, {b}", "sfence.vma zero, " + b])]
    if pick < 0.93:
        return ["mret"]                                     # illegal below M mode
    if pick < 0.95:
        return ["sret"] if user else ["fence"]              # sret is illegal in U (in S it would leave the body)
    if pick < 0.97:
        return ["wfi"] if user else ["fence.i"]             # wfi in U traps; in S it would wait for ever
    return ["ebreak"]


def segment(rng: random.Random, k: int, length: int) -> list[str]:
    user = rng.random() < 0.5
    paged = rng.random() < 0.75
    out = [f"# ---- segment {k}: {'U' if user else 'S'} mode, translation {'on' if paged else 'off'}",
           "la t0, resume", f"la t1, seg{k}_back", "sd t1, 0(t0)", "la t2, pt_l0", "la t1, testpages"]
    protections = []
    for i in range(PAGES):
        bits = rng.choice([V | R | W | A | D, V | R, V | R | W, V | X, V | R | X, V | W, 0, V | R | W | U,
                           V | R | U, V | R | W | U | A | D]) | (rng.choice([0, A, A | D, D]))
        out += [f"li t0, {i * 4096}", "add t0, t0, t1", "srli t0, t0, 12", "slli t0, t0, 10", f"ori t0, t0, {bits}",
                f"sd t0, {i * 8}(t2)"]
        protections.append(bits)
    if paged:
        asid = rng.randrange(1 << 16)
        out += ["la t0, pt_root", "srli t0, t0, 12", f"li t1, {(8 << 60) | (asid << 44)}", "or t0, t0, t1",
                "csrw satp, t0"]
    else:
        out += ["csrw satp, zero"]
    out += ["sfence.vma"]
    deleg = sum(1 << c for c in DELEGABLE if rng.random() < 0.4)
    status = (SUM if rng.random() < 0.5 else 0) | (MXR if rng.random() < 0.5 else 0)
    out += [f"li t0, {deleg}", "csrw medeleg, t0", f"li t0, {SUM | MXR}", "csrc mstatus, t0", f"li t0, {status}",
            "csrs mstatus, t0", f"li t0, {random_value(rng)}", "csrw sscratch, t0"]
    out += [f"li {r}, {random_value(rng)}" for r in WORK] + ["li s11, 0"]
    out += [f"li s10, {TEST_VA}"] if paged else ["la s10, testpages"]
    # mret into the body at the chosen level; U with translation on runs from the U alias of the code.
    out += ["li t0, 3 << 11", "csrc mstatus, t0"] + ([] if user else ["li t0, 1 << 11", "csrs mstatus, t0"])
    out += [f"la t0, seg{k}_body"] + ([f"li t1, {U_ALIAS}", "add t0, t0, t1"] if user and paged else [])
    out += ["csrw mepc, t0", "mret", ".align 2", f"seg{k}_body:"]
    amo_pages = [i for i, bits in enumerate(protections) if not paged or amo_succeeds(bits, user, status)]
    for _ in range(length):
        out += body_instruction(rng, user, amo_pages)
    out += ["ecall", f"seg{k}_back:", "la a0, msg_seg", "call puts"]
    for r in WORK + ["s11"]:
        out += [f"mv a0, {r}", "call puthex"]
    out += ["csrr a0, sscratch", "call puthex", "csrr a0, mstatus", f"li t0, {SUM | MXR | (3 << 11) | (1 << 8)}",
            "and a0, a0, t0", "call puthex", "call dump_pages"]
    return out


def render(seed: int, segments: int, length: int = 24) -> str:
    rng = random.Random(seed)
    lines = [f"/* fs_random seed {seed}: {segments} segments (tests/fs_random.py) */", ".option norvc",
             ".section .text.start", ".globl _start", "_start:", "csrr t0, mhartid", "bnez t0, park",
             "la sp, stack_top",
             # One PMP region over everything, so S and U may access memory (qemu enforces PMP).
             "li t0, -1", "csrw pmpaddr0, t0", "li t0, 0x1f", "csrw pmpcfg0, t0",
             "la t0, m_trap", "csrw mtvec, t0", "la t0, s_trap", "csrw stvec, t0",
             # root[1] -> L1 -> L0 (the test pages), root[2] identity gigapage, root[3] its U alias.
             "la t2, pt_root", "la t0, pt_l1", "srli t0, t0, 12", "slli t0, t0, 10", "ori t0, t0, 1", "sd t0, 8(t2)",
             f"li t0, {(0x8000_0000 >> 12) << 10 | V | R | W | X | A | D}", "sd t0, 16(t2)",
             f"li t0, {(0x8000_0000 >> 12) << 10 | V | R | W | X | U | A | D}", "sd t0, 24(t2)",
             "la t2, pt_l1", "la t0, pt_l0", "srli t0, t0, 12", "slli t0, t0, 10", "ori t0, t0, 1", "sd t0, 0(t2)"]
    for k in range(segments):
        lines += segment(rng, k, length)
    lines += ["la a0, msg_done", "call puts", "call poweroff", "park:", "wfi", "j park"]
    lines += HANDLERS.splitlines()
    return "\n".join(lines) + "\n"


HANDLERS = """
/* M mode: print the trap; an ecall from S or U ends the segment (continue at `resume`), anything else resumes
   after the faulting instruction at the level it came from. */
    .align 2
m_trap:
    la t0, save_ra
    sd ra, 0(t0)
    la a0, msg_trap
    call puts
    csrr a0, mcause
    call puthex
    csrr a0, mtval
    call puthex
    csrr a0, mepc
    call puthex
    csrr t1, mcause
    li t0, 8
    beq t1, t0, 1f
    li t0, 9
    beq t1, t0, 1f
    csrr t0, mepc
    addi t0, t0, 4
    csrw mepc, t0
    la t0, save_ra
    ld ra, 0(t0)
    mret
1:  la t0, save_ra
    ld ra, 0(t0)
    la t0, resume
    ld t0, 0(t0)
    jr t0
/* S mode: s11 = rotl(s11, 7) ^ scause ^ stval ^ sepc; resume after the faulting instruction. */
    .align 2
s_trap:
    csrr t3, scause
    csrr t4, stval
    slli t5, s11, 7
    srli s11, s11, 57
    or s11, s11, t5
    xor s11, s11, t3
    xor s11, s11, t4
    csrr t3, sepc
    xor s11, s11, t3
    addi t3, t3, 4
    csrw sepc, t3
    sret
/* The leaf PTEs and each test page's xor of its doublewords. */
dump_pages:
    la t0, save_ra2
    sd ra, 0(t0)
    li s9, 0
2:  la t2, pt_l0
    slli t0, s9, 3
    add t2, t2, t0
    ld a0, 0(t2)
    call puthex
    la t2, testpages
    slli t0, s9, 12
    add t2, t2, t0
    li a0, 0
    li t1, 512
3:  ld t0, 0(t2)
    xor a0, a0, t0
    addi t2, t2, 8
    addi t1, t1, -1
    bnez t1, 3b
    call puthex
    addi s9, s9, 1
    li t0, 8
    blt s9, t0, 2b
    la t0, save_ra2
    ld ra, 0(t0)
    ret

    .section .rodata
msg_trap: .asciz "trap: mcause mtval mepc\\n"
msg_seg:  .asciz "segment: registers, s11, sscratch, mstatus, PTEs and pages\\n"
msg_done: .asciz "fs_random: done\\n"

    .section .data
    .align 12
pt_root: .space 4096
pt_l1:   .space 4096
pt_l0:   .space 4096
testpages:
    .rept 4096
    .dword 0x0123456789abcdef
    .endr
resume:   .dword 0
save_ra:  .dword 0
save_ra2: .dword 0
    .align 4
    .space 4096
stack_top:
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--segments", type=int, default=40)
    ap.add_argument("--length", type=int, default=24, help="random instructions per segment body")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    with open(args.output, "w") as f:
        f.write(render(args.seed, args.segments, args.length))


if __name__ == "__main__":
    main()
