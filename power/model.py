"""The power and area model: a ``Platform`` (and optionally an ``Activity``) becomes a list of priced structures.

``build(platform, activity)`` turns every structure of the chip into a ``Struct``: its area, the capacitance it
switches per cycle at peak activity, the capacitance it switched over the measured interval (from the activity
counts), and its leaking widths. ``Model.evaluate(...)`` then gives power at any supply, clock and temperature,
with per-core voltage/frequency domains, in a few numpy operations. Area depends only on the structures, never on
the operating point.

Peak dynamic power follows McPAT's definition: every structure accessed at its maximum rate (ports x clock)
scaled by the duty cycles of the input (McPAT's ``*_duty_cycle`` statistics). Runtime dynamic power is the
capacitance switched by the counted events times V^2, over the interval.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from . import calibration as cal
from . import die, niu
from .activity import Activity
from .blocks import (
    GATE_AREA_F2,
    LOGIC_AREA_SCALE,
    PORT_PITCH_F,
    ZERO,
    Block,
    array,
    array_height_mm,
    cache_block,
    logic,
    wires,
)
from .classes import ON_DIE_CLASSES
from .config import CacheConfig, DirectoryConfig, NocConfig, Platform
from .tech import LONG_CHANNEL_SHARE, Technology, technology

REF_ROUTER_PORTS = 5        # a mesh router's ports (four neighbours and the local node): the crossbar's reference


@dataclass
class Struct:
    path: str
    group: str                  # calibration group (power.calibration)
    cls: str                    # report class: cores, caches, noc, mc, io (on die); dram, nic (off die)
    count: float                # instances (per core for core structures)
    block: Block                # one instance, calibrated
    peak_c: float               # F switched per cycle at peak, one instance
    domain: str = "uncore"      # 'core' (per-core V/f), 'uncore', 'fixed' (own clock, nominal supply)
    clock_MHz: float = 0.0      # for 'uncore'/'fixed' structures
    runtime_c: list[float] = field(default_factory=list)  # F switched over the interval (per core, or one total)
    fixed_peak_W: float = 0.0   # power that does not scale with the die's V/f (PHY analog, DRAM)
    fixed_runtime_J: float = 0.0
    fixed_leak_W: float = 0.0
    long_channel: bool = False  # array cells may use long-channel devices (informational: the leakage applies
    #                             McPAT's share rule to every structure, _long_channel_share)
    clock_c: float = 0.0        # F switched per cycle whenever the structure is clocked (clock tree, latches,
    #                             control), one instance: the runtime dynamic power of an idle structure
    idle_fixed_W: float = 0.0   # power of fixed-supply parts (PHYs) while idle
    x: dict = field(default_factory=dict)  # calibration features (power.calibration)
    component: str | None = None  # McPAT's component it belongs to: cores, l2, l3, l1dir, l2dir, noc, mc, niu, pcie
    raw_area_mm2: float = 0.0   # one instance's circuit-estimate area, before the area law (sizes the bus's span)
    tech: Technology | None = None  # its own device type's technology (a cache with McPAT's own ``device_type``),
    #                                 on its own rail at that device's nominal supply; None: the chip's

    @property
    def on_die(self) -> bool:
        return self.cls in ON_DIE_CLASSES


# The line the shared caches' dynamic law stands for: 64 bytes (most of the sweep's shared-cache points).
LAW_LINE_BITS = 512


def _cal(block: Block, k: dict[str, float]) -> Block:
    return Block(block.area_mm2 * k["area"], block.c_read * k["dyn"], block.c_write * k["dyn"],
                 block.c_search * k["dyn"], block.leak_um * k["sub"], block.gate_um * k["gate"])


def _log2(x: float) -> int:
    return max(1, math.ceil(math.log2(max(2, x))))


# Gate-equivalent sizes of logic blocks (NAND2 = 200 F^2), published-class figures for 64-bit datapaths.
ALU_GATES = 1.0e5          # adder, shifter, logic unit, 64 bit, with operand latches
MUL_GATES = 3.5e5          # 64-bit multiplier / divider
FPU_GATES = 5.5e6          # double-precision FMA-class unit with its register staging
DECODE_GATES_RISC = 1.5e4  # per decode slot
DECODE_GATES_X86 = 1.0e6   # per decode slot: x86 length decode, uop translation, microcode sequencer share
FLOP_GATES = 8.0           # one pipeline latch bit
CACHE_CTRL_GATES = 1.0e5   # cache controller (MSHR control, replacement, fill/evict datapaths, state machines)


# McPAT's embedded cores (its Cortex-A9 example, ``Embedded`` = 1) use smaller functional units: an ALU of one
# 280 x 260 um^2 (90 nm) slice instead of two, a multiplier of three instead of six, an FPU of 4.47 instead of
# 8.47 mm^2 (VFP and NEON); and half the energy per operation ("according to ARM data") on a base a sixth of the
# desktop one (1.15/3, 2 x 1.15/3 and 1.15 nJ-class coefficients against 1.15, 2 x 1.15 and 3 x 1.15). Leakage
# follows the area, as in McPAT.
EMBEDDED_ALU_AREA = 0.5
EMBEDDED_MUL_AREA = 0.5
EMBEDDED_FPU_AREA = 4.47 / 8.47
EMBEDDED_FU_ENERGY = 0.5 / 3.0


def _embedded_fu(b: Block, area: float) -> Block:
    return Block(b.area_mm2 * area, b.c_read * EMBEDDED_FU_ENERGY, b.c_write * EMBEDDED_FU_ENERGY,
                 b.c_search * EMBEDDED_FU_ENERGY, b.leak_um * area, b.gate_um * area)


# McPAT 1.3's empirical logic per table node (CACTI's technology figures): the area scaling of its curve-fitted logic
# from 90 nm (0.7x per generation, 1.5x at 180 nm) and the transistor density it leaks by (per um^2, relative).
MCPAT_LOGIC_SCALING = {180.0: 1.5, 90.0: 1.0, 65.0: 0.7, 45.0: 0.49, 32.0: 0.343, 22.0: 0.2401}
MCPAT_CORE_TX_DENSITY = {180.0: 1.25 * 0.49 * 0.4, 90.0: 1.25 * 0.49, 65.0: 1.25 * 0.7, 45.0: 1.25, 32.0: 1.25 / 0.7,
                         22.0: 1.25 / 0.49}
_LOGIC_NODES = tuple(sorted(MCPAT_LOGIC_SCALING, reverse=True))
_X_PER_GENERATION = math.log(1 / 0.7) / math.log(90.0 / 65.0)


def _logic_table(table: dict[float, float], node_nm: float, below_22) -> float:
    if node_nm <= _LOGIC_NODES[-1]:
        return below_22(node_nm)
    for hi, lo in zip(_LOGIC_NODES, _LOGIC_NODES[1:]):
        if lo <= node_nm <= hi:
            w = (hi - node_nm) / (hi - lo)      # linear between table nodes, as McPAT interpolates
            return (1 - w) * table[hi] + w * table[lo]
    raise ValueError(f"node {node_nm!r} nm is above McPAT's table")


def mcpat_logic_scaling(node_nm: float) -> float:
    """McPAT's area scaling of its empirical logic (here: the undifferentiated core) from 90 nm: 0.7x per node
    generation (180, 90, 65, 45, 32, 22 nm: 1.5, 1, 0.7, 0.49, 0.343, 0.24), not the 0.5x of F^2; linear between
    table nodes and continued below 22 nm as the same power law of the node size (x^1.1)."""
    return _logic_table(MCPAT_LOGIC_SCALING, node_nm,
                        lambda n: MCPAT_LOGIC_SCALING[22.0] * (n / 22.0) ** _X_PER_GENERATION)


def undiff_leak_width_ratio(node_nm: float) -> float:
    """Leaking width of McPAT's undifferentiated core relative to the same core's at 90 nm: McPAT leaks it as its
    area x the node's transistor density x a minimum device (width ~ F), and area x density is the same at every
    node from 90 to 22 nm (0.6x of it at 180 nm), so the width goes as F alone; a logic block of the same area
    (gates ~ area / F^2) would go as area / F, flat from 90 to 22 nm where McPAT's falls 4x."""
    product = _logic_table({n: MCPAT_LOGIC_SCALING[n] * MCPAT_CORE_TX_DENSITY[n] for n in _LOGIC_NODES}, node_nm,
                           lambda n: MCPAT_LOGIC_SCALING[22.0] * MCPAT_CORE_TX_DENSITY[22.0])
    return product / (MCPAT_LOGIC_SCALING[90.0] * MCPAT_CORE_TX_DENSITY[90.0]) * node_nm / 90.0


def undifferentiated_core_mm2(c) -> float:
    """McPAT's undifferentiated core area at 90 nm, mm^2: the part of a core's die no modelled unit covers, from
    McPAT's curve fits of die photos (out-of-order: Merom, Penryn, Prescott, Opteron; in-order: Niagara 1 and 2;
    embedded: the Sandia parametrised processor models, nil unless the core is sized for its clock). It is what
    makes a desktop out-of-order core several mm^2 bigger than the sum of its units, and an embedded one not."""
    n = max(1, int(c.pipeline_depth))
    th = max(1, int(c.threads))
    if c.embedded:
        return max(0.0, (0.4109 * n - 0.776) * (0.05 if c.opt_clockrate else 0.0)) * (1 + math.log2(th) * 0.0426)
    base = 3.57 * math.log(n) - 1.2643 if c.ooo else -2.19 * math.log(n) + 6.55
    return max(0.0, base) * (1 + math.log2(th) * 0.0716)


class _Builder:
    def __init__(self, p: Platform, act: Activity | None):
        self.p = p
        self.act = act
        self.t: Technology = technology(p.node_nm, p.device, p.temperature_K, p.long_channel)
        self.structs: list[Struct] = []
        self.x = cal.platform_features(p)

    # ---------------------------------------------------------------- helpers
    def add(self, path, group, cls, block, peak_c, *, count=1.0, domain="uncore", clock_MHz=None,
            runtime_c=None, clock_c=0.0, long_channel=False, capacity_B=None, flit_bits=None, component=None,
            dyn_law_share=1.0, **kw):
        """One priced structure. ``capacity_B``: of one instance, for arrays; ``flit_bits``: for routers (features
        of their laws); ``dyn_law_share``: the share of the dynamic law's excess over the circuit estimate this
        structure carries (1: all of it; see ``directory``)."""
        x = self.x if capacity_B is None else cal.array_features(self.x, capacity_B)
        x = x if flit_bits is None else cal.noc_features(x, flit_bits)
        k = {m: cal.factor(group, m, x) for m in cal.METRICS}
        k["dyn"] = 1.0 + (k["dyn"] - 1.0) * dyn_law_share
        b = _cal(block, k)
        rt = k["dyn"] * k["rt"]
        s = Struct(path=path, group=group, cls=cls, count=float(count), block=b, peak_c=peak_c * k["dyn"],
                   domain=domain, clock_MHz=float(clock_MHz or self.uncore_clock),
                   runtime_c=[c * rt for c in (runtime_c or [])], clock_c=clock_c * rt,
                   long_channel=long_channel, x=x, component=component or (cls if cls == "cores" else None),
                   raw_area_mm2=block.area_mm2, **kw)
        self.structs.append(s)
        return s

    def tech_of(self, device: str | None) -> Technology | None:
        """A structure's own technology when its device type is not the chip's (None otherwise)."""
        if device is None or device == self.p.device:
            return None
        p = self.p
        return technology(p.node_nm, device, p.temperature_K, p.long_channel)

    @property
    def uncore_clock(self) -> float:
        return self.p.uncore_clock_MHz or self.p.clock_MHz

    def core_runtime(self, fn) -> list[float]:
        """Per-core capacitance from a function of one core's activity."""
        if self.act is None:
            return []
        return [fn(self.act.core(i)) for i in range(self.p.cores)]

    # ---------------------------------------------------------------- cores
    def cache_arrays(self, c: CacheConfig, paddr: int, extra_ports: int = 0,
                     shared: bool = False) -> tuple[Block, Block, Block]:
        # McPAT's wire types (blocks.WIRE_PITCH_F): global H-trees, except an embedded processor's: local in its
        # cores' arrays, semi-global in its shared caches (McPAT builds a private L2 as a shared cache too)
        wire = ("semi-global" if shared else "local") if self.p.core.embedded else "global"
        t = self.tech_of(c.device) or self.t
        tag, data = cache_block(t, c.capacity_B, c.block_B, c.assoc, banks=c.banks,
                                rw_ports=c.rw_ports + extra_ports, rd_ports=c.rd_ports, wr_ports=c.wr_ports,
                                paddr_bits=paddr, sequential=c.sequential, wire=wire, name=c.name)
        mshr, fill, pref, wb = (max(0, int(x)) for x in c.buffers)
        # controller: miss handling, replacement, coherence state machines, fill/evict datapaths
        buf = logic(t, CACHE_CTRL_GATES, activity=0.02, name=f"{c.name}.controller")
        for n, (entries, width) in {"mshr": (mshr, paddr + c.block_B * 8), "fill": (fill, c.block_B * 8),
                                    "prefetch": (pref, c.block_B * 8), "wb": (wb, paddr + c.block_B * 8)}.items():
            if entries:
                buf = buf + array(t, entries, width, cam=n in ("mshr", "wb"), name=f"{c.name}.{n}")
        return tag, data, buf

    def core(self):
        c, t = self.p.core, self.t
        th = max(1, int(c.threads))
        d = c.duty
        pa = c.paddr_bits
        cls = "cores"
        kw = dict(count=1.0, domain="core")
        phys_tag = _log2(c.phys_int_regs if c.ooo else c.arch_int_regs * th)

        # ---- instruction fetch
        tag, data, buf = self.cache_arrays(c.icache, pa)
        ic = tag + data + buf
        self.add("core.ifu.icache", "l1", cls, ic,
                 d["IFU"] * (tag.c_read + data.c_read),
                 runtime_c=self.core_runtime(lambda a: a.l1i_reads * (tag.c_read + data.c_read)
                                             + a.l1i_misses * (tag.c_write + data.c_write + buf.c_write)),
                 long_channel=True, capacity_B=c.icache.capacity_B, **kw)
        btb_t, btb_d, _ = self.cache_arrays(CacheConfig("btb", c.btb.capacity_B, c.btb.block_B, c.btb.assoc,
                                                        banks=c.btb.banks, buffers=(0, 0, 0, 0)), c.vaddr_bits)
        btb = btb_t + btb_d
        self.add("core.ifu.btb", "btb", cls, btb, d["IFU"] * (btb.c_read),
                 runtime_c=self.core_runtime(lambda a: a.btb_reads * btb.c_read + a.btb_writes * btb.c_write),
                 long_channel=True, **kw)
        if c.ooo:
            bp = (array(t, c.global_pred_entries, c.global_ctr_bits, name="global_predictor")
                  + array(t, c.local_pred_entries, c.local_hist_bits, name="local_predictor_l1")
                  + array(t, 2 ** min(c.local_hist_bits, 20), c.local_ctr_bits, name="local_predictor_l2")
                  + array(t, c.chooser_entries, c.chooser_bits, name="chooser")
                  + array(t, max(1, c.ras * th), c.vaddr_bits, name="ras"))
            self.add("core.ifu.predictor", "bpred", cls, bp, d["IFU"] * bp.c_read,
                     runtime_c=self.core_runtime(lambda a: a.branches * bp.c_read + a.branch_mispredicts
                                                 * bp.c_write), **kw)
        ib = array(t, max(1, c.inst_buffer * th), c.inst_bits, rd_ports=c.decode_width, wr_ports=c.fetch_width,
                   rw_ports=0, name="instruction_buffer")
        self.add("core.ifu.inst_buffer", "ibuf", cls, ib,
                 c.decode_width * ib.c_read + c.fetch_width * ib.c_write,
                 runtime_c=self.core_runtime(lambda a: a.committed_insts * (ib.c_read + ib.c_write)), **kw)
        dec = logic(t, c.decode_width * (DECODE_GATES_X86 if c.x86 else DECODE_GATES_RISC), activity=0.05,
                    name="decoder")
        self.add("core.ifu.decoder", "decoder", cls, dec, dec.c_read,
                 runtime_c=self.core_runtime(lambda a: a.committed_insts / c.decode_width * dec.c_read), **kw)

        # ---- rename
        fp = c.fp_issue_width > 0        # a core without an FPU has no FP rename tables, registers or issue queue
        if c.ooo:
            dw = c.decode_width
            if c.rename_cam:
                rat = array(t, c.phys_int_regs, _log2(c.arch_int_regs) + 1, cam=True, search_ports=2 * dw,
                            rd_ports=0, wr_ports=dw, rw_ports=0, name="int_rat")
                frat = array(t, c.phys_fp_regs, _log2(c.arch_fp_regs) + 1, cam=True, search_ports=2 * dw,
                             rd_ports=0, wr_ports=dw, rw_ports=0, name="fp_rat") if fp else ZERO
                cp = max(1, c.checkpoints)
                ren = rat + frat + array(t, c.phys_int_regs + c.phys_fp_regs, cp, name="rat_checkpoints")
                rd_c = rat.c_search
                frd_c = frat.c_search
            else:
                cp = 1 + c.checkpoints
                rat = array(t, c.arch_int_regs * th, phys_tag * cp, rd_ports=2 * dw, wr_ports=dw, rw_ports=0,
                            access_bits=phys_tag, name="int_rat")
                frat = array(t, c.arch_fp_regs * th, _log2(c.phys_fp_regs) * cp, rd_ports=2 * dw, wr_ports=dw,
                             rw_ports=0, access_bits=_log2(c.phys_fp_regs), name="fp_rat") if fp else ZERO
                fl = array(t, c.phys_int_regs, phys_tag, rd_ports=dw, wr_ports=c.commit_width, rw_ports=0,
                           name="free_list")
                ffl = array(t, c.phys_fp_regs, _log2(c.phys_fp_regs), rd_ports=dw, wr_ports=c.commit_width,
                            rw_ports=0, name="fp_free_list") if fp else ZERO
                rrat = ZERO
                if c.checkpoints == 0:
                    rrat = array(t, c.arch_int_regs * th, phys_tag, rd_ports=c.commit_width,
                                 wr_ports=c.commit_width, rw_ports=0, name="retire_rat") + \
                        (array(t, c.arch_fp_regs * th, _log2(c.phys_fp_regs), rd_ports=c.commit_width,
                               wr_ports=c.commit_width, rw_ports=0, name="fp_retire_rat") if fp else ZERO)
                ren = rat + frat + fl + ffl + rrat
                rd_c = rat.c_read
                frd_c = frat.c_read
            wr_c = rat.c_write
            fwr_c = frat.c_write
            self.add("core.rename", "rename", cls, ren,
                     2 * dw * rd_c + dw * wr_c + (2 * rd_c + fwr_c) * min(dw, c.fp_issue_width),
                     runtime_c=self.core_runtime(lambda a: a.rename_reads * rd_c + a.rename_writes * wr_c
                                                 + a.fp_rename_reads * frd_c + a.fp_rename_writes * fwr_c), **kw)

        # ---- scheduler: issue queues and ROB
        iw = c.issue_width
        fiw = c.fp_issue_width
        iq_width = 2 * phys_tag + c.uop_opcode_bits + (2 * c.machine_bits if c.rs_window else 0) + 8
        if c.ooo:
            iq = array(t, max(1, c.iq), iq_width, cam=True, search_ports=iw, rd_ports=iw, wr_ports=c.decode_width,
                       rw_ports=0, access_bits=iq_width, name="instruction_window")
            fiq = array(t, max(1, c.fp_iq), iq_width, cam=True, search_ports=fiw, rd_ports=fiw,
                        wr_ports=min(c.decode_width, fiw), rw_ports=0, name="fp_instruction_window") if fp else ZERO
        else:
            iq = array(t, max(1, c.iq), c.inst_bits + 8, rd_ports=iw, wr_ports=c.decode_width, rw_ports=0,
                       name="instruction_window")
            fiq = ZERO
        sch = iq + fiq
        self.add("core.scheduler.iq", "scheduler", cls, sch,
                 iw * (iq.c_read + iq.c_search) + c.decode_width * iq.c_write
                 + fiw * (fiq.c_read + fiq.c_search + fiq.c_write),
                 runtime_c=self.core_runtime(lambda a: a.iq_reads * iq.c_read + a.iq_writes * iq.c_write
                                             + a.iq_wakeups * iq.c_search + a.fp_iq_reads * fiq.c_read
                                             + a.fp_iq_writes * fiq.c_write + a.fp_iq_wakeups * fiq.c_search),
                 **kw)
        if c.ooo and c.rob > 0:
            rob_w = c.vaddr_bits + 2 * phys_tag + 8 + (c.machine_bits if c.rs_window else 0)
            rob = array(t, c.rob, rob_w, rd_ports=c.commit_width, wr_ports=c.decode_width, rw_ports=0,
                        name="rob")
            self.add("core.scheduler.rob", "rob", cls, rob,
                     c.commit_width * rob.c_read + c.decode_width * rob.c_write,
                     runtime_c=self.core_runtime(lambda a: a.rob_reads * rob.c_read + a.rob_writes * rob.c_write),
                     **kw)

        # ---- register files
        n_int = c.phys_int_regs if c.ooo else c.arch_int_regs * th
        n_fp = c.phys_fp_regs if c.ooo else c.arch_fp_regs * th
        irf = array(t, max(1, n_int), c.machine_bits, rd_ports=2 * iw, wr_ports=iw, rw_ports=0, name="int_rf")
        frf = array(t, max(1, n_fp), c.machine_bits, rd_ports=2 * fiw, wr_ports=fiw, rw_ports=0,
                    name="fp_rf") if fp else ZERO
        rf = irf + frf
        if c.reg_windows:
            rf = rf + array(t, c.reg_windows * 16 * th, c.machine_bits, name="register_windows")
        self.add("core.exu.regfile", "regfile", cls, rf,
                 d["ALU"] * (2 * iw * irf.c_read + iw * irf.c_write)
                 + d["FPU"] * (2 * fiw * frf.c_read + fiw * frf.c_write),
                 runtime_c=self.core_runtime(lambda a: a.int_rf_reads * irf.c_read + a.int_rf_writes * irf.c_write
                                             + a.fp_rf_reads * frf.c_read + a.fp_rf_writes * frf.c_write), **kw)

        # ---- functional units and result buses
        alu = logic(t, ALU_GATES, activity=0.3, name="alu")
        mul = logic(t, MUL_GATES, activity=0.3, name="mul")
        fpu = logic(t, FPU_GATES, activity=0.05, name="fpu")
        if c.embedded:
            alu = _embedded_fu(alu, EMBEDDED_ALU_AREA)
            mul = _embedded_fu(mul, EMBEDDED_MUL_AREA)
            fpu = _embedded_fu(fpu, EMBEDDED_FPU_AREA)
        self.add("core.exu.alus", "alu", cls, alu.scaled(c.alus), d["ALU"] * c.alus * alu.c_read,
                 runtime_c=self.core_runtime(lambda a: a.int_ops * alu.c_read), **kw)
        self.add("core.exu.muls", "mul", cls, mul.scaled(c.muls), d["MUL"] * c.muls * mul.c_read,
                 runtime_c=self.core_runtime(lambda a: a.mul_ops * mul.c_read), **kw)
        self.add("core.exu.fpus", "fpu", cls, fpu.scaled(c.fpus), d["FPU"] * c.fpus * fpu.c_read,
                 runtime_c=self.core_runtime(lambda a: a.fp_ops * fpu.c_read), **kw)
        fu_area = (alu.area_mm2 * c.alus + mul.area_mm2 * c.muls + fpu.area_mm2 * c.fpus + rf.area_mm2)
        bus_len = math.sqrt(max(fu_area, 1e-6)) * 2.0
        n_fu = c.alus + c.muls + c.fpus
        bypass = wires(t, int((c.machine_bits + phys_tag) * max(1, math.ceil(n_fu))), bus_len, pitch_F=6.0,
                       routed_over=0.8)
        per_result = bypass.c_read / max(1.0, n_fu)
        self.add("core.exu.bypass", "bypass", cls, bypass,
                 per_result * (d["ALU_cdb"] * c.alus + d["MUL_cdb"] * c.muls + d["FPU_cdb"] * c.fpus),
                 runtime_c=self.core_runtime(lambda a: (a.int_ops + a.mul_ops + a.fp_ops) * per_result), **kw)

        # ---- load/store unit
        mp = max(1, c.mem_ports)
        tag, data, buf = self.cache_arrays(c.dcache, pa, extra_ports=mp - 1)
        dc = tag + data + buf
        self.add("core.lsu.dcache", "l1", cls, dc,
                 d["LSU"] * mp * (tag.c_read + data.c_read),
                 runtime_c=self.core_runtime(lambda a: a.l1d_reads * (tag.c_read + data.c_read)
                                             + a.l1d_writes * (tag.c_read + data.c_write)
                                             + (a.l1d_read_misses + a.l1d_write_misses)
                                             * (tag.c_write + data.c_write + buf.c_write)),
                 long_channel=True, capacity_B=c.dcache.capacity_B, **kw)
        lsq = ZERO
        lq_c = sq_c = 0.0
        if c.lq > 0:
            lq = array(t, c.lq * (th if not c.ooo else 1), c.vaddr_bits + c.machine_bits, cam=True,
                       search_ports=mp, rd_ports=mp, wr_ports=mp, rw_ports=0, name="load_queue")
            lsq = lsq + lq
            lq_c = lq.c_write + lq.c_search
        if c.sq > 0:
            sq = array(t, c.sq * (th if not c.ooo else 1), c.vaddr_bits + c.machine_bits, cam=True,
                       search_ports=mp, rd_ports=mp, wr_ports=mp, rw_ports=0, name="store_queue")
            lsq = lsq + sq
            sq_c = sq.c_write + sq.c_search
        if lsq.area_mm2 > 0:
            self.add("core.lsu.lsq", "lsq", cls, lsq, d["LSU"] * mp * (lq_c + sq_c),
                     runtime_c=self.core_runtime(lambda a: (a.loads + a.stores) * (lq_c + sq_c) / 2), **kw)

        # ---- MMU
        tlb_w = (c.vaddr_bits - 12) + (pa - 12) + 8
        itlb = array(t, max(1, c.itlb_entries), tlb_w, cam=True, search_ports=1, name="itlb")
        dtlb = array(t, max(1, c.dtlb_entries), tlb_w, cam=True, search_ports=mp, name="dtlb")
        self.add("core.mmu.itlb", "tlb", cls, itlb, d["MemManU_I"] * itlb.c_search,
                 runtime_c=self.core_runtime(lambda a: a.itlb_accesses * itlb.c_search
                                             + a.itlb_misses * itlb.c_write), **kw)
        self.add("core.mmu.dtlb", "tlb", cls, dtlb, d["MemManU_D"] * mp * dtlb.c_search,
                 runtime_c=self.core_runtime(lambda a: a.dtlb_accesses * dtlb.c_search
                                             + a.dtlb_misses * dtlb.c_write), **kw)

        # ---- pipeline latches, clocking and control
        stage_bits = c.decode_width * (c.inst_bits + 2 * c.machine_bits + 3 * phys_tag) * th
        pipe = logic(t, c.pipeline_depth * stage_bits * FLOP_GATES, activity=0.25, name="pipeline")
        ctrl = logic(t, (2.0e4 + 2.0e4 * c.issue_width) * (2.5 if c.ooo else 1.0) * th, activity=0.05,
                     name="control")
        self.add("core.pipeline", "pipeline", cls, pipe + ctrl, pipe.c_read + ctrl.c_read,
                 runtime_c=self.core_runtime(lambda a: a.committed_insts / c.decode_width * pipe.c_read * 0.7),
                 clock_c=pipe.c_read * 0.3 + ctrl.c_read, **kw)

        # ---- the undifferentiated core: the die area no unit accounts for (clock spine, control, routing, test)
        undiff_mm2 = undifferentiated_core_mm2(c)
        if undiff_mm2 > 0:
            area = undiff_mm2 * mcpat_logic_scaling(self.p.node_nm)
            gates = area / (GATE_AREA_F2 * t.F2_mm2 * LOGIC_AREA_SCALE[t.device])
            u = logic(t, gates, activity=0.0, name="undifferentiated_core")
            # leaking widths as McPAT's (undiff_leak_width_ratio), at the level of a logic block of its 90 nm area
            gates90 = undiff_mm2 / (GATE_AREA_F2 * (90e-6) ** 2 * LOGIC_AREA_SCALE[t.device])
            k = logic(t, gates90).leak_um / t.F_leak_um * 0.09 * undiff_leak_width_ratio(self.p.node_nm) / u.leak_um
            u = Block(u.area_mm2, u.c_read, u.c_write, u.c_search, u.leak_um * k, u.gate_um * k)
            self.add("core.undiff", "undiff", cls, u, 0.0, **kw)

        # ---- private L2 (counted in the core, as McPAT does)
        if c.l2 is not None:
            tag, data, buf = self.cache_arrays(c.l2, pa, shared=True)
            l2 = tag + data + buf
            self.add("core.l2", "l2p", cls, l2, c.l2.duty_cycle * (tag.c_read + data.c_read),
                     tech=self.tech_of(c.l2.device),
                     runtime_c=self.core_runtime(lambda a: a.l2_reads * (tag.c_read + data.c_read)
                                                 + a.l2_writes * (tag.c_read + data.c_write)
                                                 + (a.l2_read_misses + a.l2_write_misses) * (data.c_write)),
                     long_channel=True, capacity_B=c.l2.capacity_B, **kw)

    # ---------------------------------------------------------------- shared caches and directories
    def shared_cache(self, c: CacheConfig):
        self._cache_struct(c, self.act.caches.get(c.name) if self.act is not None else None,
                           component=f"l{c.level}", missing=f"cache {c.name}")

    def _cache_struct(self, c: CacheConfig, a, *, component: str, missing: str, dyn_law_share: float = 1.0):
        """A shared cache (or a directory cache) with its buffers and controller, under the shared caches' law."""
        tag, data, buf = self.cache_arrays(c, self.p.core.paddr_bits, shared=True)
        b = tag + data + buf
        rc = None
        if self.act is not None:
            if a is None:
                self.act.missing.append(missing)
                rc = [0.0]
            else:
                rc = [a.reads * (tag.c_read + data.c_read) + a.writes * (tag.c_read + data.c_write)
                      + (a.read_misses + a.write_misses + a.writebacks) * (tag.c_write + data.c_write)]
        self.add(f"{c.name}", "cache", "caches", b,
                 c.duty_cycle * (tag.c_read + data.c_read),
                 count=c.count, clock_MHz=c.clock_MHz, runtime_c=rc, long_channel=True, capacity_B=c.capacity_B,
                 component=component, dyn_law_share=dyn_law_share, tech=self.tech_of(c.device))

    def directory(self, dcfg: DirectoryConfig):
        t = self.tech_of(dcfg.device) or self.t
        if dcfg.kind == "cam":
            entries = max(1, dcfg.capacity_B // max(1, dcfg.block_B))
            width = self.p.core.paddr_bits - 6 + 4
            blk = array(t, entries, width, cam=True, search_ports=1, rd_ports=1, wr_ports=1, rw_ports=1,
                        access_bits=max(8, dcfg.output_bits * 8), name=dcfg.name)
            rd, wr = blk.c_search + blk.c_read, blk.c_write
        else:
            # A directory cache is built as the shared cache it is (McPAT builds its type-1 directory as a
            # SharedCache): tag then data arrays (read sequentially, as a lower-level cache), its miss, fill,
            # prefetch and write-back buffers and its controller, under the shared caches' law. Priced as a
            # tag+data pair under the CAM directories' law, the target's 120 KB directory slice of 5-byte
            # entries was a quarter of McPAT's area (0.097 against 0.376 mm^2).
            cc = CacheConfig(dcfg.name, dcfg.capacity_B, dcfg.block_B, dcfg.assoc, clock_MHz=dcfg.clock_MHz,
                             throughput_cycles=dcfg.throughput_cycles, latency_cycles=dcfg.latency_cycles,
                             sequential=True, buffers=dcfg.buffers, count=dcfg.count, device=dcfg.device)
            # Its dynamic energy: the shared caches' law lifts the circuit estimate 5-8x at these capacities, and
            # what it stands for is the data path of the lines it was fitted on (McPAT's shared cache drives half
            # a line, out_w = 256 bits of a 64-byte line, through the H-tree of a megabyte-class array; the
            # sweep's shared caches are of 16- to 64-byte lines, most 64). A directory entry is a few bytes, so it
            # carries the law's excess in proportion to its entry over a 64-byte line (assumed linear: the
            # H-tree's wires and drivers are per output bit). Under the whole law the target's and the Xeon's
            # directories were priced at 5.9x and 7.9x McPAT's peak, their circuit estimate within 5-45% of it.
            share = min(1.0, dcfg.block_B * 8 / LAW_LINE_BITS)
            return self._cache_struct(cc, self.act.directories.get(dcfg.name) if self.act is not None else None,
                                      component=f"l{dcfg.level}dir", missing=f"directory {dcfg.name}",
                                      dyn_law_share=share)
        rc = None
        if self.act is not None:
            a = self.act.directories.get(dcfg.name)
            rc = [0.0] if a is None else [a.reads * rd + a.writes * wr]
        self.add(dcfg.name, "dir", "caches", blk, rd, count=dcfg.count,
                 clock_MHz=dcfg.clock_MHz, runtime_c=rc, capacity_B=dcfg.capacity_B, component=f"l{dcfg.level}dir",
                 tech=self.tech_of(dcfg.device))

    # ---------------------------------------------------------------- network on chip
    def noc(self, n: NocConfig, chip_area_mm2: float):
        t = self.t
        routers = max(1, n.nodes_x * n.nodes_y)
        rc = None
        act = self.act.nocs.get(n.name) if self.act is not None else None
        if n.kind == "bus":
            length = math.sqrt(chip_area_mm2 * n.chip_coverage)
            bus = wires(t, 2 * n.flit_bits, length, pitch_F=8.0, routed_over=n.routed_over)
            drv = logic(t, 2 * n.flit_bits * 20 + 2000, activity=0.5, name="bus_interface")
            blk = bus + drv
            per = bus.c_read * 0.5 + drv.c_read
            if self.act is not None:
                rc = [0.0 if act is None else act.flits * per]
            self.add(f"{n.name}.bus", "bus", "noc", blk, n.duty_cycle * per / max(1.0, n.link_throughput),
                     count=n.count, clock_MHz=n.clock_MHz, runtime_c=rc, component="noc")
            return
        # An input port's buffer as McPAT builds it (CACTI's Router::buffer_stats): one mat of VCs x entries rows
        # and flit x VCs columns, a write port per VC and one read port; its cells grow with the ports, so the
        # buffer grows as VCs^2 x entries x flit (x the ports' cell growth), not as VCs x entries x flit.
        vcs = max(1, n.vcs)
        rows, cols = max(1, vcs * n.buffer_entries), n.flit_bits * vcs
        buf = array(t, rows, cols, rd_ports=1, wr_ports=vcs, rw_ports=0, access_bits=n.flit_bits,
                    name=f"{n.name}.vc_buffer")
        pitch = 4.0 * t.F_um * 1e-3  # mm per crossbar track
        xw = n.in_ports * n.flit_bits * pitch
        xh = n.out_ports * n.flit_bits * pitch
        xbar_c = n.flit_bits * (xw + xh) * t.c_wire_per_mm * 1.5
        # McPAT's router is its input ports' buffers high and buffers plus crossbar wide (Router::get_router_area):
        # the crossbar's share of the die is the strip of the crossbar's width (a track per output bit) beside the
        # stacked buffers, not the crossbar's own square
        strip_mm2 = n.in_ports * array_height_mm(t, rows, cols, ports=vcs + 1) * n.out_ports * n.flit_bits * \
            PORT_PITCH_F * t.F_array_um * 1e-3
        # crosspoint drivers are sized for the wire they drive: an output line runs past every input's flit
        # (CACTI's Crossbar::output_buffer, a line of inputs x flit tracks), so the drivers grow with inputs x
        # flit and the leaking width as inputs^2 x outputs x flit^2 (McPAT's routers: x2.9-4 per doubled flit; the
        # target's 7-port routers leaked 0.62x McPAT's, the Xeon's 3-port ring stops 1.8x, with flit alone)
        drive = n.in_ports * n.flit_bits / (REF_ROUTER_PORTS * cal.REF_FLIT_BITS)
        xbar = Block(strip_mm2, xbar_c, xbar_c, 0.0, n.in_ports * n.out_ports * n.flit_bits * 6 * t.F_leak_um * drive,
                     n.in_ports * n.out_ports * n.flit_bits * 12 * t.F_leak_um * drive)
        arb = logic(t, n.in_ports * n.out_ports * max(1, n.vcs) * 60, activity=0.2, name="arbiter")
        # The input buffers are SRAM arrays (McPAT prices them with CACTI, one read and one write port) with their
        # own law; the routers' law, fitted on meshes whose buffers are a single flit per port (McPAT's default),
        # is the crossbar's and arbiter's. Under the routers' law the Alpha 21364's 2 x 128 flits per port leaked
        # 14x McPAT's router. (Under the shared caches' law they made that law trade the L2s' leakage against the
        # Niagara 2's 16-flit buffers, which put the HP points' leakage with HP left out at 18% instead of 12%.)
        router = xbar + arb
        per_flit_buffer = buf.c_read + buf.c_write
        per_flit_router = xbar_c + arb.c_read / max(1, n.in_ports)
        # Links as McPAT prices them: only a network with global links has any (has_global_link; their length
        # the chip's edge over the mean of the mesh's sides, halved between neighbours). A routers-only network
        # (has_global_link 0, the exported target's mesh and every mesh of the sweep) is priced as its routers:
        # McPAT prints no link line for it, and pricing links there put the target-like meshes at 1.65x McPAT.
        link_len = math.sqrt(chip_area_mm2 * n.chip_coverage) / ((n.nodes_x + n.nodes_y) / 2.0)
        if routers > 1:
            link_len /= 2.0
        link = wires(t, n.flit_bits, link_len, pitch_F=8.0, routed_over=n.routed_over)
        links_per_router = (n.in_ports - 1) + (n.out_ports - 1) if n.global_link else 0
        if self.act is not None:
            rc = [0.0 if act is None else act.hops * per_flit_router]
        # peak: every input port forwards one flit per cycle
        peak_rate = n.duty_cycle * n.in_ports / max(1.0, n.link_throughput)
        self.add(f"{n.name}.routers", "noc", "noc", router, peak_rate * per_flit_router,
                 count=routers * n.count, clock_MHz=n.clock_MHz, runtime_c=rc, flit_bits=n.flit_bits,
                 component="noc")
        rcb = None if self.act is None else [0.0 if act is None else act.hops * per_flit_buffer]
        self.add(f"{n.name}.router_buffers", "noc_buffer", "noc", buf.scaled(n.in_ports), peak_rate * per_flit_buffer,
                 count=routers * n.count, clock_MHz=n.clock_MHz, runtime_c=rcb,
                 component="noc")
        if links_per_router:
            # repeated global wires like a bus's: priced with the bus law, not the routers' (fitted on meshes
            # whose routers have no links, it carried the Alpha 21364's 13 links to 16x McPAT's NoC leakage)
            rcl = None if self.act is None else [0.0 if act is None else act.hops * link.c_read * 0.5]
            self.add(f"{n.name}.links", "bus", "noc", link.scaled(links_per_router), peak_rate * link.c_read * 0.5,
                     count=routers * n.count, clock_MHz=n.clock_MHz, runtime_c=rcl, component="noc")

    # ---------------------------------------------------------------- memory controllers and DRAM
    def memory(self):
        p, t = self.p, self.t
        m = p.mc
        if m.count <= 0:
            return
        ch = m.channels_per_mc
        addr = p.core.paddr_bits
        # Front end as McPAT builds it: per channel a request reorder queue (a CAM on address + opcode) and a
        # read and a write buffer of bus words (data bus with its ECC bits), each with a read, a write and (the
        # queue) a search port per channel of the controller, so multi-channel controllers grow as ch^2 x ports.
        bus_bits = m.databus_bits + math.ceil(m.databus_bits / 8)
        queue = array(t, max(1, m.req_window), addr + 16, rd_ports=ch, wr_ports=ch, rw_ports=0, cam=True,
                      search_ports=ch, name="mc.request_queue")
        buffers = array(t, max(1, m.io_buffer), bus_bits, rd_ports=ch, wr_ports=ch, rw_ports=0,
                        name="mc.io_buffer").scaled(2)
        fe = (queue + buffers).scaled(ch)
        # the front end's switching, per byte, is referred to a 100,000-gate engine a channel (assumed)
        te_ref = logic(t, ch * 1.0e5, activity=0.25, name="mc.transaction_engine")
        # Transaction engine and PHY areas as McPAT prices them (empirical laws from Niagara 1/2 die photos for a
        # high-performance controller, Cadence ChipEstimator IP figures for a low-power one), per channel, on the
        # bus width with its ECC bits: the high-performance engine and PHY grow with ln(peak transfer rate) and
        # linearly with F (I/O-bound layouts), and the PHY is always there; the low-power engine is 0.15 mm^2
        # per 72 bits at 65 nm scaling as F^2, its PHY (only with ``with_phy``) 20% of a 16-bit DDR3-2133 PHY's
        # 1.3 mm^2 at 40 nm, scaled with clock x transfer rate x width and F^2.
        te_area, phy_area = mc_backend_phy_area_mm2(m, t.node_nm_area)
        # The engine's leaking devices: a low-power engine is Cadence ChipEstimator's 50,000 gates per 64 data bits
        # (as McPAT counts them); a high-performance one 100,000 gates a channel (assumed)
        te_gates = ch * (MC_LP_ENGINE_GATES * bus_bits / 64.0 if m.low_power else 1.0e5)
        te = dataclasses.replace(logic(t, te_gates, activity=0.25, name="mc.transaction_engine"), area_mm2=te_area)
        # PHY (DDR I/O, DLLs): its leaking width per pin
        pins = ch * (m.databus_bits + m.addrbus_bits)
        phy = Block(phy_area, 0.0, 0.0, 0.0, pins * 200 * t.F_leak_um, pins * 400 * t.F_leak_um)
        # Peak: the front end's queue and buffers switch half a 100,000-gate engine's capacitance per byte moved
        # (the ratio of clock-driven to traffic-driven power in published controller breakdowns; under the ``mc``
        # law); the engine and PHY take the published figures below. Three structures, as McPAT prints them.
        mc_clk = m.io_clock_MHz
        per_byte = 0.5 * te_ref.c_read / ch
        bytes_per_cycle = m.peak_MBps * ch / mc_clk
        # The transaction engine's energy per bus-word access from the published controller figures McPAT cites
        # (mc_engine_access_J), not the fitted law: at peak every channel makes one access per transfer (DDR: two
        # per bus clock); counted, each DRAM access moves a line (with its ECC bits) in bus words, and refresh and
        # scrubbing draw a tenth of the peak whatever the traffic (McPAT's assumption, kept as the engine's idle).
        e_acc = mc_engine_access_J(m, t.node_nm, t.vdd)
        te_peak_W = m.count * ch * 2.0 * mc_clk * 1e6 * e_acc
        rc = None
        rt_J = 0.0
        line_bits = m.block_B * 8 + math.ceil(m.block_B * 8 / 8)     # a line with its ECC bits
        if self.act is not None:
            d = self.act.dram
            nacc = d.reads + d.writes
            rc = [nacc * m.block_B * per_byte]
            rt_J = nacc * line_bits / bus_bits * e_acc
        # The PHY's dynamic power per Gb/s of the channel's peak transfer rate, from the published figure McPAT
        # cites (mc_phy_W_per_gbps); at peak every channel at its peak rate, counted: the lines moved
        phy_w_gbps = mc_phy_W_per_gbps(m, t.node_nm, t.vdd)
        phy_peak_W = m.count * ch * phy_w_gbps * m.peak_MBps * 8e-3 * bus_bits / 72.0
        phy_rt_J = 0.0
        if self.act is not None:
            phy_rt_J = (self.act.dram.reads + self.act.dram.writes) * line_bits * 1e-9 * phy_w_gbps
        kw = dict(count=m.count, domain="fixed", clock_MHz=mc_clk, component="mc")
        self.add("mc.front_end", "mc", "mc", fe, bytes_per_cycle * per_byte, runtime_c=rc, **kw)
        self.add("mc.transaction_engine", "mc", "mc", te, 0.0, runtime_c=None if rc is None else [0.0],
                 fixed_peak_W=te_peak_W, fixed_runtime_J=rt_J, idle_fixed_W=MC_ENGINE_IDLE_SHARE * te_peak_W, **kw)
        self.add("mc.phy", "mc", "mc", phy, 0.0, runtime_c=None if rc is None else [0.0], fixed_peak_W=phy_peak_W,
                 fixed_runtime_J=phy_rt_J, idle_fixed_W=MC_ENGINE_IDLE_SHARE * phy_peak_W, **kw)

        if p.dram is not None:
            self.dram()

    def dram(self):
        """DRAM devices from datasheet currents (Micron's DDR power method, TN-41-01 / TN-40-07)."""
        p = self.p
        dr = p.dram
        dv = dr.device
        ndev = dr.channels * dr.ranks_per_channel * dr.devices_per_rank
        v = dv.vdd
        background_W = ndev * v * (dv.idd3n * 0.5 + dv.idd2n * 0.5) * 1e-3 + ndev * dv.vpp * dv.ipp3n * 1e-3
        e_act = v * (dv.idd0 * dv.trc_ns - (dv.idd3n * dv.tras_ns + dv.idd2n * (dv.trc_ns - dv.tras_ns))) * 1e-12
        t_burst = dv.burst / 2 * dv.tck_ns
        e_rd = v * (dv.idd4r - dv.idd3n) * t_burst * 1e-12
        e_wr = v * (dv.idd4w - dv.idd3n) * t_burst * 1e-12
        e_ref = v * (dv.idd5b - dv.idd3n) * dv.trfc_ns * 1e-12
        bits_per_burst = dv.burst * dv.width_bits
        e_io = dv.io_pj_per_bit * 1e-12 * bits_per_burst
        # refresh: every device refreshes once per tREFI
        ref_W = ndev * e_ref / (dv.trefi_ns * 1e-9)
        # peak: every channel streams reads back to back, one activate per burst (closed page, worst case)
        bursts_per_s = dr.channels * 1.0 / (t_burst * 1e-9)
        peak_W = bursts_per_s * dr.devices_per_rank * (e_rd + e_io + e_act)
        rt_J, idle_W = 0.0, 0.0
        if self.act is not None:
            a = self.act.dram
            per_rank = dr.devices_per_rank
            rt_J = per_rank * (a.reads * (e_rd + e_io) + a.writes * (e_wr + e_io) + a.activates * e_act) \
                + dr.devices_per_rank * a.refreshes * e_ref
            if a.refreshes == 0:
                idle_W = ref_W      # refreshes not counted: the devices refresh anyway, idle or not
        self.add("dram", "mc", "dram", ZERO, 0.0, count=1, domain="fixed", clock_MHz=1.0,
                 fixed_peak_W=peak_W + ref_W, fixed_runtime_J=rt_J, fixed_leak_W=background_W, idle_fixed_W=idle_W)

    # ---------------------------------------------------------------- NIC and PCIe
    def io(self):
        p, t = self.p, self.t
        n = p.nic
        if n.count > 0:
            gbps = n.ports * n.port_gbps
            clk = n.clock_MHz
            lp = bool(n.low_power)
            # The ports' MAC, PCS and SerDes from the published figures McPAT prices its NIU with (power.niu): their
            # area, their gates' leaking widths (logic's convention, at the figures' transistor width), and their
            # energies, not a fitted capacitance
            gates, width = niu.port_leaking_gates(lp, gbps)
            blk = Block(niu.port_area_mm2(lp, t.node_nm_area, gbps), 0.0, 0.0, 0.0,
                        gates * 2.0 * width * t.F_leak_um, gates * 4.0 * width * t.F_leak_um)
            logic_W = niu.port_logic_J_per_cycle(lp, t.node_nm, t.vdd, gbps) * clk * 1e6
            serdes_W = niu.port_serdes_W(lp, t.node_nm, t.vdd, gbps)
            # A NIC's packet buffers and DMA engines, when the config has them (McPAT's NIU has neither)
            per_cycle, bufs, dma = 0.0, None, None
            bytes_per_cycle = gbps * 1e9 / 8 / (clk * 1e6)
            if n.buffer_KB > 0:
                bufs = array(t, n.buffer_KB * 1024 * 8 // 512, 512, rd_ports=1, wr_ports=1, rw_ports=0,
                             banks=4, name="nic.packet_buffer")
                blk = blk + bufs
                per_cycle += bytes_per_cycle / 64 * (bufs.c_read + bufs.c_write)
            if n.queues > 0:
                dma = logic(t, 5.0e4 + 2.0e3 * n.queues, activity=0.1, name="nic.dma") + \
                    array(t, n.queues * 4, 128, name="nic.queue_state")
                blk = blk + dma
                per_cycle += dma.c_read
            rc, rt_J = None, 0.0
            if self.act is not None:
                a = self.act.nic
                secs = self.act.seconds
                # the ports at the share of their line rate the counted bytes used (McPAT: its load share); a
                # SerDes sends idle symbols when there is no traffic (NIU_SERDES_IDLE_SHARE)
                load = niu.load_fraction(a.rx_bytes, a.tx_bytes, n.ports, n.port_gbps, secs)
                rt_J = n.count * secs * load * (logic_W + (1.0 - NIU_SERDES_IDLE_SHARE) * serdes_W)
                byts = a.rx_bytes + a.tx_bytes
                rc = [(byts / 64 * (bufs.c_read + bufs.c_write) if bufs is not None else 0.0)
                      + ((a.rx_packets + a.tx_packets) * dma.c_read if dma is not None else 0.0)]
            self.add("nic", "niu", "io" if n.on_die else "nic", blk, n.duty_cycle * per_cycle,
                     count=n.count, domain="fixed", clock_MHz=clk, runtime_c=rc,
                     fixed_peak_W=n.count * n.duty_cycle * (logic_W + serdes_W), fixed_runtime_J=rt_J,
                     idle_fixed_W=n.count * serdes_W * NIU_SERDES_IDLE_SHARE, component="niu")
        c = p.pcie
        if c.count > 0:
            lane_gbps = PCIE_LANE_GBPS.get(c.gen)
            if lane_gbps is None:
                raise ValueError(f"pcie.gen={c.gen!r} is out of range: allowed 1 to 5")
            ctl = logic(t, 1.5e5 + 4.0e4 * c.lanes, activity=0.25, name="pcie.controller") + \
                array(t, 64 * c.lanes, 256, rd_ports=1, wr_ports=1, rw_ports=0, name="pcie.buffers")
            phy_area = c.lanes * 0.35 * (p.node_nm / 65.0) ** 0.5 if c.with_phy else 0.0
            blk = ctl + Block(phy_area, 0.0, 0.0, 0.0, c.lanes * 2e4 * t.F_leak_um if c.with_phy else 0.0,
                              c.lanes * 4e4 * t.F_leak_um if c.with_phy else 0.0)
            ctl_W, serdes_W, serdes_J_bit = pcie_lane_power(c, p.node_nm, t.vdd)
            lane_W = ctl_W + (serdes_W if c.with_phy else 0.0)
            rc, rt_J = None, 0.0
            if self.act is not None:
                a = self.act.nic
                # counted TLPs and bytes through the controller's logic; every bit moved through the SerDes
                rc = [a.pcie_tlps * ctl.c_read * 4 + a.pcie_bytes / 32 * ctl.c_write * 0.2]
                rt_J = a.pcie_bytes * 8 * serdes_J_bit if c.with_phy else 0.0
            # peak: every lane's controller and SerDes at their published per-lane power (pcie_lane_power), not
            # the logic block's fitted capacitance; the block prices area, leakage and counted runtime events
            self.add("pcie", "io", "io", blk, 0.0, count=c.count, domain="fixed",
                     clock_MHz=c.clock_MHz, runtime_c=rc, clock_c=ctl.c_read * 0.1,
                     fixed_peak_W=c.count * c.lanes * lane_W * c.duty_cycle, fixed_runtime_J=rt_J,
                     idle_fixed_W=c.count * c.lanes * (serdes_W if c.with_phy else 0.0) * PCIE_SERDES_IDLE_SHARE,
                     component="pcie")


# PCIe lane data rates after line coding (Gb/s): 8b/10b for generations 1-2, 128b/130b from generation 3 (PCI-SIG
# base specifications)
PCIE_LANE_GBPS = {1: 2.5 * 0.8, 2: 5.0 * 0.8, 3: 8.0 * 128 / 130, 4: 16.0 * 128 / 130, 5: 32.0 * 128 / 130}
# A PCIe controller (PHY logic, data-link and transaction layers) per lane and cycle at 65 nm and 1.1 V: Cadence
# ChipEstimate's x8 high-performance (3.75 nJ a cycle) and low-power (2.21 nJ) controllers, as McPAT's technical
# report cites them; dynamic energy scales with the feature size and V^2.
PCIE_CTRL_J_PER_LANE_CYCLE_65NM = {False: 3.75e-9 / 8, True: 2.21e-9 / 8}
# SerDes power per Gb/s of lane rate at 90 nm and 1.2 V: 10 mW per Gb/s (the figure McPAT's report cites); it
# scales with the feature size and V^2 as the controller does.
SERDES_W_PER_GBPS_90NM = 0.01
# share of a SerDes' power it draws idle (L0, no traffic): clock recovery and termination stay on (assumed)
PCIE_SERDES_IDLE_SHARE = 0.3
# the same share for an Ethernet port's SerDes, which sends idle symbols between frames (assumed, as PCIe's)
NIU_SERDES_IDLE_SHARE = PCIE_SERDES_IDLE_SHARE


def pcie_lane_power(c, node_nm: float, vdd: float) -> tuple[float, float, float]:
    """One PCIe lane's controller power at its clock, its SerDes power at the generation's lane rate (W), and the
    SerDes energy per bit (J). McPAT prices every SerDes at PCIe 2.0's 4 Gb/s whatever the generation; here the
    lane carries its generation's rate (``PCIE_LANE_GBPS``), the energy per bit being the node's."""
    ctl_J = PCIE_CTRL_J_PER_LANE_CYCLE_65NM[bool(c.low_power)] * (node_nm / 65.0) * (vdd / 1.1) ** 2
    serdes_J_bit = SERDES_W_PER_GBPS_90NM * 1e-9 * (node_nm / 90.0) * (vdd / 1.2) ** 2
    return ctl_J * c.clock_MHz * 1e6, serdes_J_bit * PCIE_LANE_GBPS[c.gen] * 1e9, serdes_J_bit


def _long_channel_share(s: Struct, p: Platform) -> float:
    """Share of a structure's devices that can be long-channel (``power.tech.LONG_CHANNEL_SHARE``): core
    structures (private L2 included) by core type, shared caches and directories all, other uncore logic 82%."""
    share = LONG_CHANNEL_SHARE
    if s.domain == "core":
        return share["core_ooo" if p.core.ooo else "core_inorder"]
    return share["cache" if s.group in ("cache", "dir") else "uncore"]


def build(platform: Platform, activity: Activity | None = None) -> "Model":
    platform.validate()
    if activity is not None:
        activity.validate()
    b = _Builder(platform, activity)
    if platform.cores > 0:
        b.core()
    for c in platform.caches:
        b.shared_cache(c)
    for d in platform.directories:
        b.directory(d)
    b.memory()
    b.io()
    # The bus and the global links span the die of the circuit estimates, before the area laws, under any laws: the
    # fit prices every sweep point at unit laws (power.fit.Raw), so a span from the calibrated die gave the bus one
    # length in the fit and another in pricing (xeon_l3_48m's bus +18% over McPAT's peak and runtime; now +0.4%).
    # The calibrated die of calibration.json would be consistent too, but carries the held-out points' own area
    # laws into a cross-validation fold.
    chip = sum(s.raw_area_mm2 * s.count * (platform.cores if s.domain == "core" else 1)
               for s in b.structs if s.on_die)
    for n in platform.nocs:
        b.noc(n, chip)
    if platform.die is not None:
        # the product's die beyond the structures (power.die): after the network, whose span is the structures'
        slices = max((c.count for c in platform.caches), default=platform.cores)
        for d in die.parts(platform.die, b.structs, platform.cores, slices):
            b.structs.append(Struct(path=d.path, group="die", cls="other", count=1.0, domain=d.domain,
                                    block=Block(d.area_mm2, 0.0, 0.0, 0.0, d.leak_um, d.gate_um), peak_c=d.peak_c,
                                    clock_MHz=d.clock_MHz, runtime_c=list(d.runtime_c), clock_c=d.clock_c,
                                    raw_area_mm2=d.area_mm2))
    return Model(platform, activity, b.t, b.structs)


class Model:
    """Priced structures of one socket; ``evaluate`` gives a ``power.report.Result`` at an operating point."""

    def __init__(self, platform: Platform, activity: Activity | None, tech: Technology, structs: list[Struct]):
        self.platform = platform
        self.activity = activity
        self.tech = tech
        self.structs = structs
        s = structs
        self._core = np.array([x.domain == "core" for x in s])
        self._fixed = np.array([x.domain == "fixed" for x in s])
        self._count = np.array([x.count for x in s])
        self._area = np.array([x.block.area_mm2 for x in s])
        self._peak_c = np.array([x.peak_c for x in s])
        self._leak = np.array([x.block.leak_um for x in s])
        self._lc = np.array([(x.tech or tech).long_channel_factor(_long_channel_share(x, platform)) for x in s])
        # structures of their own device type (McPAT's per-cache device_type): their supply is their device's
        # nominal, scaled with their domain's (McPAT: the device's own nominal when the input sets none)
        self._own = [(k, x.tech) for k, x in enumerate(s) if x.tech is not None]
        self._vratio = np.array([x.tech.vdd / tech.vdd if x.tech is not None else 1.0 for x in s])
        self._gate = np.array([x.block.gate_um for x in s])
        self._clock = np.array([x.clock_MHz for x in s])
        self._fixed_peak = np.array([x.fixed_peak_W for x in s])
        self._fixed_leak = np.array([x.fixed_leak_W for x in s])
        self._fixed_rt = np.array([x.fixed_runtime_J for x in s])
        self._clock_c = np.array([x.clock_c for x in s])
        self._idle_fixed = np.array([x.idle_fixed_W for x in s])
        n_cores = max(1, platform.cores)
        rt = np.zeros((len(s), n_cores))
        self.has_runtime = activity is not None
        for k, x in enumerate(s):
            if x.runtime_c:
                if x.domain == "core":
                    rt[k, :len(x.runtime_c)] = x.runtime_c[:n_cores]
                else:
                    rt[k, 0] = sum(x.runtime_c)
        self._rt = rt

    def nominal_vdd(self) -> float:
        return self.tech.vdd

    def evaluate(self, *, core_vdd=None, core_MHz=None, uncore_vdd: float | None = None,
                 temperature_K: float | None = None, label: str = ""):
        """Power and area with per-core supplies and clocks (scalars or one value per core)."""
        from .report import Result
        p = self.platform
        n = max(1, p.cores)
        vnom = self.tech.vdd
        vc = np.broadcast_to(np.asarray(p.vdd or vnom if core_vdd is None else core_vdd, dtype=float), (n,))
        fc = np.broadcast_to(np.asarray(p.clock_MHz if core_MHz is None else core_MHz, dtype=float), (n,))
        if np.any(vc <= 0) or np.any(fc <= 0):
            raise ValueError("core_vdd and core_MHz must be > 0")
        vu = vnom if uncore_vdd is None else float(uncore_vdd)
        T = self.tech.temperature_K if temperature_K is None else float(temperature_K)
        t = self.tech
        ioff, ig = t.dev.ioff_um, t.dev.igate_um
        lc = self._lc
        cores = p.cores if p.cores > 0 else 0

        # dynamic: capacitance per cycle x V^2 f in each structure's domain
        v2f_core = float(np.sum(vc ** 2 * fc * 1e6)) if cores else 0.0
        v2f = np.where(self._core, v2f_core, vu ** 2 * self._clock * 1e6)
        v2f = np.where(self._fixed, vnom ** 2 * self._clock * 1e6, v2f) * self._vratio ** 2
        peak = self._peak_c * self._count * v2f + self._fixed_peak
        # an idle structure's clocking never costs more than the structure at its peak (the clock and peak laws
        # are fitted separately)
        clock = np.minimum(self._clock_c * self._count * v2f + self._idle_fixed, peak)
        area = self._area * self._count * np.where(self._core, cores, 1)

        sub_core = float(np.sum([t.subthreshold_scale(v, T) * v for v in vc[:cores]])) if cores else 0.0
        gate_core = float(np.sum([t.gate_scale(v) * v for v in vc[:cores]])) if cores else 0.0
        sub_u = t.subthreshold_scale(vu, T) * vu
        gate_u = t.gate_scale(vu) * vu
        sub = self._leak * self._count * ioff * lc * np.where(self._core, sub_core, sub_u) + self._fixed_leak
        gate = self._gate * self._count * ig * np.where(self._core, gate_core, gate_u)
        for k, own in self._own:
            r = self._vratio[k]
            vs = vc[:cores] * r if self._core[k] else [vu * r]
            sub[k] = self._leak[k] * self._count[k] * own.dev.ioff_um * lc[k] * \
                sum(own.subthreshold_scale(v, T) * v for v in vs) + self._fixed_leak[k]
            gate[k] = self._gate[k] * self._count[k] * own.dev.igate_um * sum(own.gate_scale(v) * v for v in vs)

        runtime = np.zeros(len(self.structs))
        if self.has_runtime:
            secs = self.activity.seconds
            v2 = np.where(self._core[:, None], (vc[None, :] ** 2), np.where(self._fixed[:, None], vnom ** 2,
                                                                           vu ** 2)) * self._vratio[:, None] ** 2
            # counted events times their energies, plus clocking, as McPAT prices runtime (core.cc: every unit's
            # runtime energy is its access counts times its energy per access, with no bound). A structure's peak
            # is not its maximum: it is the access rate McPAT assumes for thermal design (a duty cycle, reads
            # only), so counts can legitimately price above it (McPAT's xeon_base: instruction cache 1.48x, BTB
            # 2x with its writes, multiplier 3.12x); clipping each structure at its peak under-priced such runs.
            runtime = (self._rt * v2).sum(axis=1) / secs + self._fixed_rt / secs + clock
        else:
            clock = np.zeros(len(self.structs))
        return Result(self, area=area, peak=peak, runtime=runtime, sub=sub, gate=gate, clock=clock,
                      core_vdd=np.array(vc),
                      core_MHz=np.array(fc), uncore_vdd=vu, temperature_K=T, label=label)


# A memory controller's transaction engine per access (one bus word per channel), as McPAT prices it from Cadence
# ChipEstimate: a high-performance engine 10% of a 4.32 W controller at 1 GHz, 65 nm, 1.1 V, per 72 data bits; a
# low-power one 0.9 nJ an access, the average of DDR2/3 protocol controllers at 800 MHz and 12.8 GB/s, growing with
# its clock and transfer rate (a faster low-power controller is a bigger one); both with V^2 and the feature size.
MC_ENGINE_HP_J_65NM = 4.32 * 0.1 / 1e9
MC_ENGINE_LP_J_65NM = 0.9e-9
MC_ENGINE_IDLE_SHARE = 0.1   # refresh and scrubbing: a tenth of the peak (McPAT's assumption)
MC_LP_ENGINE_GATES = 5.0e4   # a low-power engine per 64 data bits (Cadence ChipEstimator, as McPAT cites it)


def mc_engine_access_J(m, node_nm: float, vdd: float) -> float:
    """Energy of one transaction-engine access of a memory controller (J), on its data bus with ECC."""
    bus = m.databus_bits + math.ceil(m.databus_bits / 8)
    scale = bus / 72.0 * (vdd / 1.1) ** 2 * node_nm / 65.0
    if not m.low_power:
        return MC_ENGINE_HP_J_65NM * scale
    return MC_ENGINE_LP_J_65NM * (2.0 * m.io_clock_MHz / 800.0) * (m.peak_MBps / 12800.0) * scale


# A memory controller PHY's dynamic power per Gb/s at 90 nm and 1.2 V, as McPAT prices it (an ISSCC 2006 90 nm
# memory transceiver and Cadence ChipEstimate's I/O figures): a high-performance PHY 10 mW (differential, LVDS) or
# 40 mW, scaling with the square root of the feature size (I/O-bound); a low-power one 10 mW, with the feature size.
MC_PHY_W_PER_GBPS_90NM = {"lvds": 0.01, "single_ended": 0.04, "low_power": 0.01}


def mc_phy_W_per_gbps(m, node_nm: float, vdd: float) -> float:
    """A memory controller PHY's dynamic power per Gb/s (W); 0 for a low-power controller without a PHY."""
    v2 = (vdd / 1.2) ** 2
    if m.low_power:
        return MC_PHY_W_PER_GBPS_90NM["low_power"] * node_nm / 90.0 * v2 if m.with_phy else 0.0
    return MC_PHY_W_PER_GBPS_90NM["lvds" if m.lvds else "single_ended"] * math.sqrt(node_nm / 90.0) * v2


def mc_backend_phy_area_mm2(m, node_nm_area: float) -> tuple[float, float]:
    """McPAT 1.3's transaction-engine and PHY areas (mm^2) of one memory controller (all its channels)."""
    bus = m.databus_bits + math.ceil(m.databus_bits / 8)        # data bus with its ECC bits
    ch = m.channels_per_mc
    if not m.low_power:
        f = node_nm_area / 90.0
        rate = math.log(2.0 * m.peak_MBps)
        backend = max(0.0, (2.7927 * rate - 19.862) / 2.0) * bus / 128.0 * f * ch
        phy = max(0.0, (6.4323 * rate - 48.134) / 2.0) * bus / 128.0 * f * ch
        return backend, phy
    backend = 0.15 * bus / 72.0 * (node_nm_area / 65.0) ** 2 * ch
    if not m.with_phy:
        return backend, 0.0
    transfers_per_s = 2.0 * m.io_clock_MHz * 1e6                  # DDR: two transfers per bus clock
    phy = (1.3 * 0.2 / 2133e6 * transfers_per_s / 17066.0 * m.peak_MBps * bus / 16.0
           * (node_nm_area / 40.0) ** 2 * ch)
    return backend, phy
