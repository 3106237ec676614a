"""Random straight-line RV64GC programs (integer, atomic, compressed and F/D) for differential testing against
qemu-riscv64.

One assembly file holds many *sequences*. Each sequence
  1. resets a 512-byte memory window (from a fixed template), sets fcsr (a random rounding mode 0..4 and random
     flags), loads f0..f31 from a table of seeded values (doubles and NaN-boxed singles with NaNs, infinities,
     zeros, subnormals and extremes among them, and a few improperly boxed singles) and x1..x31 likewise, except sp
     (x2) and s0 (x8), which are the two base registers and always point into the window,
  2. runs a random body: RV64I ALU, immediate and shift instructions (incl. the W forms), lui/auipc, RV64M
     multiply/divide (divisors from random registers, so zero and overflow cases occur), loads and stores of
     every width confined to the window, RV64A AMOs (.w/.d, every ordering) and adjacent LR/SC pairs on the
     base addresses, fences, and explicit RVC forms (c.*), mixed with the 32-bit forms; and F/D: arithmetic, FMA,
     square root, conversions, compares, classify, sign injection, min/max and moves in every rounding mode
     (static and dynamic), FP loads and stores (also c.fld/c.fsd/c.fldsp/c.fsdsp) and the fflags/frm/fcsr CSRs,
  3. writes one *record* to stdout with a single `write`: the 512-byte window, x1..x31, f0..f31 and fcsr
     (RECORD_SIZE bytes in all).
Then the program exits with exit_group(0). Sequences are independent, so a divergence can be localized by
re-running one sequence's prefixes (see `prefixes`).

Memory layout, relative to sp (= area + 2048, 16-byte aligned):
  [sp-256, sp+256)   the window: random loads/stores, base sp (offsets -256..255) or s0 = sp-128
  [sp+256, sp+504)   the register dump x1..x31
  [sp+504, sp+760)   f0..f31
  [sp+760, sp+768)   fcsr
Usable as a script too:  python tests/riscv_random.py --seed 7 --count 100 -o /tmp/r.S
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass, field

WINDOW = 512
REGS_BYTES = 31 * 8
FREGS_BYTES = 32 * 8
RECORD_SIZE = WINDOW + REGS_BYTES + FREGS_BYTES + 8
# Share of random instructions drawn from the F/D pool.
FP_SHARE = 0.4
S0_OFFSET = -128        # s0 = sp + S0_OFFSET

ABI_NAMES = ["zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5",
             "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6"]

BASES = {2, 8}                                       # sp and s0 are never written by a random instruction
DESTS = [r for r in range(1, 32) if r not in BASES]  # any other register may be a destination
RVC_DESTS = [r for r in range(9, 16)]                # x9..x15: compressed rd' that is not the base s0
RVC_SRCS = list(range(8, 16))                        # x8..x15: compressed rs'

EDGE_VALUES = [0, 1, 2, 3, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
               0x100000000, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFF80000000,
               0xFFFFFFFF7FFFFFFF, 0xFFFFFFFFFFFFFFFE, 0x5555555555555555, 0xAAAAAAAAAAAAAAAA]

R_OPS = ["add", "sub", "sll", "slt", "sltu", "xor", "srl", "sra", "or", "and",
         "addw", "subw", "sllw", "srlw", "sraw",
         "mul", "mulh", "mulhsu", "mulhu", "div", "divu", "rem", "remu",
         "mulw", "divw", "divuw", "remw", "remuw"]
I_OPS = ["addi", "slti", "sltiu", "xori", "ori", "andi", "addiw"]
SHIFT_IMM = {"slli": 63, "srli": 63, "srai": 63, "slliw": 31, "srliw": 31, "sraiw": 31}
LOADS = {"lb": 1, "lbu": 1, "lh": 2, "lhu": 2, "lw": 4, "lwu": 4, "ld": 8}
STORES = {"sb": 1, "sh": 2, "sw": 4, "sd": 8}
AMO_OPS = ["amoswap", "amoadd", "amoxor", "amoand", "amoor", "amomin", "amomax", "amominu", "amomaxu"]
ORDERINGS = ["", ".aq", ".rl", ".aqrl"]
FENCES = ["fence", "fence rw, rw", "fence r, rw", "fence w, w", "fence iorw, iorw", "fence.tso"]
RVC_OPS = ["c.addi", "c.addiw", "c.li", "c.lui", "c.slli", "c.srli", "c.srai", "c.andi", "c.mv", "c.add",
           "c.sub", "c.xor", "c.or", "c.and", "c.subw", "c.addw", "c.lw", "c.ld", "c.sw", "c.sd", "c.lwsp",
           "c.ldsp", "c.swsp", "c.sdsp", "c.addi4spn", "c.nop"]
FP_ARITH = ["fadd", "fsub", "fmul", "fdiv"]
FP_FMA = ["fmadd", "fmsub", "fnmsub", "fnmadd"]
FP_SIGN_MINMAX = ["fsgnj", "fsgnjn", "fsgnjx", "fmin", "fmax"]
FP_COMPARE = ["feq", "flt", "fle"]
ROUNDING = ["", "rne", "rtz", "rdn", "rup", "rmm", "dyn"]
FP_TO_INT = [f"fcvt.{i}.{f}" for i in ("w", "wu", "l", "lu") for f in "sd"]
INT_TO_FP = [f"fcvt.{f}.{i}" for i in ("w", "wu", "l", "lu") for f in "sd"]
# Conversions that are always exact take no rounding-mode operand in binutils.
EXACT_CONVERSIONS = {"fcvt.d.w", "fcvt.d.wu", "fcvt.d.s"}
FP_MNEMONICS = ([f"{op}.{f}" for op in FP_ARITH + FP_FMA + FP_SIGN_MINMAX + FP_COMPARE + ["fsqrt", "fclass"]
                 for f in "sd"] + FP_TO_INT + INT_TO_FP
                + ["fcvt.s.d", "fcvt.d.s", "fmv.x.w", "fmv.x.d", "fmv.w.x", "fmv.d.x", "flw", "fld", "fsw", "fsd",
                   "c.fld", "c.fsd", "c.fldsp", "c.fsdsp", "frrm", "fsrmi", "frflags", "fsflags", "fsflagsi",
                   "frcsr", "csrrc", "csrrs"])
# f64 and f32 bit patterns worth hitting: zeros, ones, extremes, subnormals, infinities, quiet and signalling NaNs,
# and the neighbours of 1 and of the smallest normal whose products probe tininess after rounding.
FP64_EDGES = [0x0, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000, 0x7FEFFFFFFFFFFFFF,
              0xFFEFFFFFFFFFFFFF, 0x0010000000000000, 0x000FFFFFFFFFFFFF, 0x0000000000000001, 0x800FFFFFFFFFFFFF,
              0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0x7FF4000000000001, 0xFFF8000000000123,
              0x4340000000000000, 0x43E0000000000000, 0xC3E0000000000000, 0x41E0000000000000, 0x3FE0000000000000,
              0x4000000000000000, 0x3CA0000000000000, 0x3FEFFFFFFFFFFFFF, 0x3FEFFFFFFFFFFFFE, 0x0010000000000001]
FP32_EDGES = [0x0, 0x80000000, 0x3F800000, 0xBF800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x00800000, 0x007FFFFF, 0x00000001,
              0x7F800000, 0xFF800000, 0x7FC00000, 0x7FA00001, 0xFFC00123, 0x4F000000, 0xCF000000, 0x5F000000,
              0x3F000000, 0x4B000000, 0x33800000, 0x3F7FFFFF, 0x3F7FFFFE, 0x00800001]
BOX = 0xFFFFFFFF00000000
ALL_MNEMONICS = (R_OPS + I_OPS + list(SHIFT_IMM) + ["lui", "auipc"] + list(LOADS) + list(STORES) + RVC_OPS
                 + [f"{op}.{w}" for op in AMO_OPS for w in "wd"] + ["lr.w", "lr.d", "fence", "fence.tso"]
                 + FP_MNEMONICS)


@dataclass
class Sequence:
    index: int
    regs: list[int]                                  # initial x1..x31 (entries for sp and s0 are unused)
    body: list[str] = field(default_factory=list)    # one instruction per entry, assembler syntax
    fregs: list[int] = field(default_factory=lambda: [0] * 32)  # initial f0..f31 (bit patterns)
    fcsr: int = 0                                    # initial fcsr (frm 0..4, any flags)

    def mnemonic(self, k: int) -> str:
        """The mnemonic of entry k without ordering suffixes (an LR/SC pair is one entry, named by its LR)."""
        m = self.body[k].split()[0]
        if m in ("csrrs", "csrrc") or m.startswith("fcvt"):
            return m
        for suffix in (".aqrl", ".aq", ".rl"):
            m = m.removesuffix(suffix)
        return m


def reg(r: int) -> str:
    return ABI_NAMES[r]


def random_value(rng: random.Random) -> int:
    kind = rng.random()
    if kind < 0.25:
        return rng.choice(EDGE_VALUES)
    if kind < 0.45:
        return rng.randint(-64, 64) & 0xFFFFFFFFFFFFFFFF
    if kind < 0.60:
        return rng.getrandbits(32) - (1 << 32 if rng.random() < 0.5 else 0) & 0xFFFFFFFFFFFFFFFF
    return rng.getrandbits(64)


def nonzero(rng: random.Random, lo: int, hi: int) -> int:
    while True:
        v = rng.randint(lo, hi)
        if v:
            return v


def aligned_offset(rng: random.Random, lo: int, hi_exclusive: int, size: int) -> int:
    """A multiple of size in [lo, hi_exclusive - size]."""
    return rng.randrange(lo // size, (hi_exclusive - size) // size + 1) * size


def random_fp_value(rng: random.Random) -> int:
    """A register image: a double, a NaN-boxed single, or (rarely) an improperly boxed single."""
    kind = rng.random()
    if kind < 0.25:
        return rng.choice(FP64_EDGES)
    if kind < 0.45:
        return BOX | rng.choice(FP32_EDGES)
    if kind < 0.65:
        # A moderate double: small exponents make sums, products and conversions land in range often.
        return (rng.getrandbits(1) << 63) | (rng.randint(0x3F0, 0x410) << 52) | rng.getrandbits(52)
    if kind < 0.80:
        return BOX | (rng.getrandbits(1) << 31) | (rng.randint(0x70, 0x90) << 23) | rng.getrandbits(23)
    if kind < 0.95:
        return rng.getrandbits(64)
    return rng.getrandbits(32)          # upper half zero: not a valid single (reads as the canonical NaN)


def freg(r: int) -> str:
    return f"f{r}"


def random_fp_instruction(rng: random.Random) -> str:
    fs = lambda: freg(rng.randrange(32))  # noqa: E731
    xs = lambda: reg(rng.randrange(32))  # noqa: E731 - x0 included
    xd = lambda: reg(0 if rng.random() < 0.03 else rng.choice(DESTS))  # noqa: E731
    fmt = rng.choice("sd")
    rm = rng.choice(ROUNDING)
    rm_arg = f", {rm}" if rm else ""
    kind = rng.random()
    if kind < 0.22:
        return f"{rng.choice(FP_ARITH)}.{fmt} {fs()}, {fs()}, {fs()}{rm_arg}"
    if kind < 0.34:
        return f"{rng.choice(FP_FMA)}.{fmt} {fs()}, {fs()}, {fs()}, {fs()}{rm_arg}"
    if kind < 0.38:
        return f"fsqrt.{fmt} {fs()}, {fs()}{rm_arg}"
    if kind < 0.48:
        return f"{rng.choice(FP_SIGN_MINMAX)}.{fmt} {fs()}, {fs()}, {fs()}"
    if kind < 0.55:
        return f"{rng.choice(FP_COMPARE)}.{fmt} {xd()}, {fs()}, {fs()}"
    if kind < 0.58:
        return f"fclass.{fmt} {xd()}, {fs()}"
    if kind < 0.66:
        return f"{rng.choice(FP_TO_INT)} {xd()}, {fs()}{rm_arg}"
    if kind < 0.72:
        op = rng.choice(INT_TO_FP)
        return f"{op} {fs()}, {xs()}" + ("" if op in EXACT_CONVERSIONS else rm_arg)
    if kind < 0.75:
        op = rng.choice(["fcvt.s.d", "fcvt.d.s"])
        return f"{op} {fs()}, {fs()}" + ("" if op in EXACT_CONVERSIONS else rm_arg)
    if kind < 0.79:
        op = rng.choice(["fmv.x.w", "fmv.x.d", "fmv.w.x", "fmv.d.x"])
        return f"{op} {xd()}, {fs()}" if op.startswith("fmv.x") else f"{op} {fs()}, {xs()}"
    if kind < 0.88:
        op = rng.choice(["flw", "fld", "fsw", "fsd"])
        size = 4 if op[-1] == "w" else 8
        if rng.random() < 0.5:
            return f"{op} {fs()}, {aligned_offset(rng, -256, 256, size)}(sp)"
        return f"{op} {fs()}, {aligned_offset(rng, -256 - S0_OFFSET, 256 - S0_OFFSET, size)}(s0)"
    if kind < 0.93:
        op = rng.choice(["c.fld", "c.fsd", "c.fldsp", "c.fsdsp"])
        if op in ("c.fld", "c.fsd"):
            return f"{op} {freg(rng.randrange(8, 16))}, {rng.randrange(0, 32) * 8}(s0)"
        return f"{op} {fs()}, {rng.randrange(0, 32) * 8}(sp)"
    # The CSRs. frm only ever receives 0..4, so a dynamic rounding mode stays legal.
    op = rng.choice(["frrm", "fsrmi", "frflags", "fsflags", "fsflagsi", "frcsr", "csrrc", "csrrs"])
    if op in ("frrm", "frflags", "frcsr"):
        return f"{op} {xd()}"
    if op == "fsrmi":
        return f"{op} {xd()}, {rng.randint(0, 4)}"
    if op == "fsflags":
        return f"{op} {xd()}, {xs()}"
    if op == "fsflagsi":
        return f"{op} {xd()}, {rng.randint(0, 31)}"
    if op == "csrrc":   # clearing bits of frm keeps it in 0..4
        return f"csrrc {xd()}, {rng.choice(['fflags', 'frm', 'fcsr'])}, {xs()}"
    return f"csrrs {xd()}, fflags, {xs()}"


def random_instruction(rng: random.Random) -> str:
    if rng.random() < FP_SHARE:
        return random_fp_instruction(rng)
    src = lambda: reg(rng.randrange(32))  # noqa: E731 - any register may be read, x0 included
    dst = lambda: reg(0 if rng.random() < 0.03 else rng.choice(DESTS))  # noqa: E731 - rarely x0 (discarded)
    kind = rng.random()
    if kind < 0.30:
        return f"{rng.choice(R_OPS)} {dst()}, {src()}, {src()}"
    if kind < 0.42:
        imm = rng.choice([rng.randint(-2048, 2047), rng.randint(-16, 16), -2048, 2047, -1, 0])
        return f"{rng.choice(I_OPS)} {dst()}, {src()}, {imm}"
    if kind < 0.50:
        op = rng.choice(list(SHIFT_IMM))
        return f"{op} {dst()}, {src()}, {rng.randint(0, SHIFT_IMM[op])}"
    if kind < 0.54:
        return f"{rng.choice(['lui', 'auipc'])} {dst()}, {rng.randrange(1 << 20):#x}"
    if kind < 0.64:
        op = rng.choice(list(LOADS))
        size = LOADS[op]
        if rng.random() < 0.5:
            return f"{op} {dst()}, {aligned_offset(rng, -256, 256, size)}(sp)"
        return f"{op} {dst()}, {aligned_offset(rng, -256 - S0_OFFSET, 256 - S0_OFFSET, size)}(s0)"
    if kind < 0.66:
        # AMOs address memory through a base register alone: sp or s0, both 16-byte aligned.
        width = rng.choice("wd")
        base = rng.choice(["sp", "s0"])
        return f"{rng.choice(AMO_OPS)}.{width}{rng.choice(ORDERINGS)} {dst()}, {src()}, ({base})"
    if kind < 0.675:
        # An LR immediately followed by its SC (one entry, so localization never separates them): on one hart
        # the SC succeeds (rd = 0) and stores.
        width = rng.choice("wd")
        base = rng.choice(["sp", "s0"])
        return (f"lr.{width}{rng.choice(ORDERINGS)} {dst()}, ({base}); "
                f"sc.{width}{rng.choice(ORDERINGS)} {dst()}, {src()}, ({base})")
    if kind < 0.68:
        return rng.choice(FENCES)
    if kind < 0.74:
        op = rng.choice(list(STORES))
        size = STORES[op]
        if rng.random() < 0.5:
            return f"{op} {src()}, {aligned_offset(rng, -256, 256, size)}(sp)"
        return f"{op} {src()}, {aligned_offset(rng, -256 - S0_OFFSET, 256 - S0_OFFSET, size)}(s0)"
    return random_compressed(rng)


def random_compressed(rng: random.Random) -> str:
    op = rng.choice(RVC_OPS)
    rd = reg(rng.choice(DESTS))
    rdc = reg(rng.choice(RVC_DESTS))
    rsc = reg(rng.choice(RVC_SRCS))
    nonzero_src = reg(rng.randrange(1, 32))
    if op in ("c.addi",):
        return f"{op} {rd}, {nonzero(rng, -32, 31)}"
    if op in ("c.addiw", "c.li"):
        return f"{op} {rd}, {rng.randint(-32, 31)}"
    if op == "c.lui":
        field6 = nonzero(rng, -32, 31)
        return f"{op} {rd}, {field6 & 0xFFFFF:#x}"
    if op == "c.slli":
        return f"{op} {rd}, {rng.randint(1, 63)}"
    if op in ("c.srli", "c.srai"):
        return f"{op} {rdc}, {rng.randint(1, 63)}"
    if op == "c.andi":
        return f"{op} {rdc}, {rng.randint(-32, 31)}"
    if op in ("c.mv", "c.add"):
        return f"{op} {rd}, {nonzero_src}"
    if op in ("c.sub", "c.xor", "c.or", "c.and", "c.subw", "c.addw"):
        return f"{op} {rdc}, {rsc}"
    if op in ("c.lw", "c.sw"):
        reg_ = rdc if op == "c.lw" else rsc
        return f"{op} {reg_}, {rng.randrange(0, 32) * 4}(s0)"
    if op in ("c.ld", "c.sd"):
        reg_ = rdc if op == "c.ld" else rsc
        return f"{op} {reg_}, {rng.randrange(0, 32) * 8}(s0)"
    if op in ("c.lwsp", "c.swsp"):
        reg_ = rd if op == "c.lwsp" else reg(rng.randrange(32))
        return f"{op} {reg_}, {rng.randrange(0, 64) * 4}(sp)"
    if op in ("c.ldsp", "c.sdsp"):
        reg_ = rd if op == "c.ldsp" else reg(rng.randrange(32))
        return f"{op} {reg_}, {rng.randrange(0, 32) * 8}(sp)"
    if op == "c.addi4spn":
        return f"{op} {rdc}, sp, {rng.randrange(1, 256) * 4}"
    return "c.nop"


def generate(seed: int, count: int, min_len: int = 16, max_len: int = 48) -> list[Sequence]:
    rng = random.Random(seed)
    seqs = []
    for i in range(count):
        regs = [random_value(rng) for _ in range(31)]
        fregs = [random_fp_value(rng) for _ in range(32)]
        fcsr = (rng.randint(0, 4) << 5) | rng.getrandbits(5)
        body = [random_instruction(rng) for _ in range(rng.randint(min_len, max_len))]
        seqs.append(Sequence(i, regs, body, fregs, fcsr))
    return seqs


def prefixes(seq: Sequence) -> list[Sequence]:
    """Sequence `seq` cut after 0, 1, ..., len(body) instructions (same start state): record k of a program
    made from these is the state after k instructions."""
    return [Sequence(k, seq.regs, seq.body[:k], seq.fregs, seq.fcsr) for k in range(len(seq.body) + 1)]


def template_bytes(seed: int) -> bytes:
    return random.Random(seed ^ 0x5EED).randbytes(WINDOW)


def render(seqs: list[Sequence], seed: int) -> str:
    """The whole program as GNU assembler text."""
    out = [
        "/* generated by tests/riscv_random.py: random straight-line RV64GC sequences */",
        "    .option norelax",
        "    .option norvc",
        "    .text",
        "    .globl _start",
        "_start:",
        "    lla     sp, area + 2048",
        f"    addi    s0, sp, {S0_OFFSET}",
    ]
    for seq in seqs:
        out.append(f"seq_{seq.index}:")
        out.append("    call    reset_window")
        out.append(f"    li      t0, {seq.fcsr}")
        out.append("    fscsr   t0")
        out.append(f"    lla     t6, fregs_{seq.index}")
        for r in range(32):
            out.append(f"    fld     f{r}, {8 * r}(t6)")
        out.append(f"    lla     t6, regs_{seq.index}")
        for r in range(1, 31):
            if r not in BASES:
                out.append(f"    ld      {reg(r)}, {8 * (r - 1)}(t6)")
        out.append("    ld      t6, 240(t6)")
        rvc = False
        for insn in seq.body:
            want = insn.startswith("c.")
            if want != rvc:
                out.append("    .option rvc" if want else "    .option norvc")
                rvc = want
            out.append(f"    {insn}")
        if rvc:
            out.append("    .option norvc")
        out.append("    sd      ra, 256(sp)")
        out.append("    call    dump")
    out += [
        "    li      a0, 0",
        "    li      a7, 94",
        "    ecall",
        "",
        "/* copy the template into the window [sp-256, sp+256) */",
        "reset_window:",
        "    lla     t0, template",
        "    addi    t1, sp, -256",
        "    addi    t2, t1, 512",
        "1:  ld      t3, 0(t0)",
        "    sd      t3, 0(t1)",
        "    addi    t0, t0, 8",
        "    addi    t1, t1, 8",
        "    bltu    t1, t2, 1b",
        "    ret",
        "",
        "/* store x2..x31 beside x1 (stored by the caller), f0..f31 and fcsr; write it all as one record */",
        "dump:",
    ]
    for r in range(2, 32):
        out.append(f"    sd      {reg(r)}, {256 + 8 * (r - 1)}(sp)")
    for r in range(32):
        out.append(f"    fsd     f{r}, {256 + REGS_BYTES + 8 * r}(sp)")
    out += ["    frcsr   t0", f"    sd      t0, {256 + REGS_BYTES + FREGS_BYTES}(sp)"]
    out += [
        "    li      a0, 1",
        "    addi    a1, sp, -256",
        f"    li      a2, {RECORD_SIZE}",
        "    li      a7, 64",
        "    ecall",
        "    ret",
        "",
        "    .data",
        "    .balign 16",
        "template:",
    ]
    tpl = template_bytes(seed)
    for i in range(0, WINDOW, 16):
        out.append("    .byte " + ", ".join(str(b) for b in tpl[i:i + 16]))
    for seq in seqs:
        out.append(f"regs_{seq.index}:")
        for i in range(0, 31, 4):
            out.append("    .dword " + ", ".join(f"{v:#x}" for v in seq.regs[i:i + 4]))
        out.append(f"fregs_{seq.index}:")
        for i in range(0, 32, 4):
            out.append("    .dword " + ", ".join(f"{v:#x}" for v in seq.fregs[i:i + 4]))
    out += ["    .bss", "    .balign 4096", "area:", "    .space 4096", ""]
    return "\n".join(out)


def split_records(data: bytes) -> list[bytes]:
    return [data[i:i + RECORD_SIZE] for i in range(0, len(data), RECORD_SIZE)]


def decode_record(record: bytes) -> tuple[bytes, list[int]]:
    """(window bytes, [x1..x31])"""
    window, regs = record[:WINDOW], record[WINDOW:]
    return window, [int.from_bytes(regs[i:i + 8], "little") for i in range(0, REGS_BYTES, 8)]


def decode_fp(record: bytes) -> tuple[list[int], int]:
    """([f0..f31], fcsr)"""
    base = WINDOW + REGS_BYTES
    fregs = [int.from_bytes(record[base + i:base + i + 8], "little") for i in range(0, FREGS_BYTES, 8)]
    return fregs, int.from_bytes(record[base + FREGS_BYTES:base + FREGS_BYTES + 8], "little")


def describe_record_difference(ref: bytes, got: bytes) -> list[str]:
    """Human-readable differences between two records (registers by name, window bytes by sp offset)."""
    lines = []
    if len(ref) != len(got):
        lines.append(f"record length {len(got)} (reference {len(ref)})")
        return lines
    (rw, rr), (gw, gr) = decode_record(ref), decode_record(got)
    for i, (a, b) in enumerate(zip(rr, gr)):
        if a != b:
            lines.append(f"x{i + 1}/{ABI_NAMES[i + 1]}: {b:#018x}, qemu {a:#018x}")
    (rf, rc), (gf, gc) = decode_fp(ref), decode_fp(got)
    for i, (a, b) in enumerate(zip(rf, gf)):
        if a != b:
            lines.append(f"f{i}: {b:#018x}, qemu {a:#018x}")
    if rc != gc:
        lines.append(f"fcsr: {gc:#x} (frm {gc >> 5}, fflags {gc & 31:#07b}), qemu {rc:#x} (frm {rc >> 5}, "
                     f"fflags {rc & 31:#07b})")
    for off in range(0, WINDOW, 8):
        if rw[off:off + 8] != gw[off:off + 8]:
            lines.append(f"memory sp{off - 256:+d}: {gw[off:off + 8].hex()}, qemu {rw[off:off + 8].hex()}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("-o", "--output", default="-")
    args = parser.parse_args()
    text = render(generate(args.seed, args.count), args.seed)
    if args.output == "-":
        print(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
