"""Circuit-level building blocks: memory arrays (RAM and CAM) and logic blocks.

Every block reduces to a ``Block``: area (mm^2), switched capacitance per access (F) for reads, writes and CAM
searches, and the width (um) of transistors that leak when idle (subthreshold) and whose gates leak (gate
leakage). Power follows from these with the supply, clock, temperature and access rates (``power.model``), which is
what makes re-pricing a configuration at another operating point cheap, and why area does not depend on the
operating point.

Array model (CACTI-class, simplified):

* cells: 6T SRAM of 146 F^2 (10 F x 14.6 F); each port beyond the first adds one wire track (8 F) to the height
  and two (bitline pair) to the width; a CAM cell is 1.5x wider and 1.2x taller, and each search port adds tracks;
* the array is cut into banks and each bank into sub-arrays of at most 256 rows x 512 columns; every sub-array
  has a row decoder with wordline drivers beside it and a column strip (precharge, mux, sense amps, write
  drivers) under it, both replicated per port; sub-arrays are joined by an H-tree whose overhead grows with
  log2 of their number; each bank adds predecoders, control and per-port I/O latches (which dominate small
  arrays, as in CACTI);
* a read activates the sub-arrays holding the bits read: wordline, all bitlines of those sub-arrays (low swing,
  30% of full-swing energy), decoder, sense amps, plus the H-tree wires carrying address and data;
* leakage: every cell has two off transistors of about 1.5 F each; periphery drivers add width per row and per
  column.

Logic blocks (ALUs, FPUs, decoders, controllers) are counted in gate equivalents (a NAND2 of 200 F^2) with a
switched capacitance per operation and a leaking width per gate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .tech import Technology

GATE_AREA_F2 = 200.0      # one NAND2-equivalent gate incl. local routing, in F^2
SRAM_CELL_W_F = 14.6
SRAM_CELL_H_F = 10.0
PORT_PITCH_F = 8.0
MAX_SUB_ROWS = 256
# Wire pitches of CACTI's technology tables (its ``wire_pitch``, in units of the feature size): local, semi-global
# and global wires. McPAT routes a cache's H-tree on global wires (``wire_os_mat_type`` 2), except in an embedded
# processor (its ``Embedded`` input): local wires in the core's arrays, semi-global in its shared caches.
WIRE_PITCH_F = {"local": 2.5, "semi-global": 4.0, "global": 8.0}
MAX_SUB_COLS = 512
# The repeaters of a cache's H-tree (its ``route_bits``), as leaking device width per mm of routed wire, in units of
# the feature size: about a 100x minimum inverter (~450 F of nmos and pmos width, half of it off at a time) every
# 0.1 mm (assumed: the order of CACTI's delay-optimal repeaters on its array wires). CACTI builds an array's data
# and address H-trees of repeated wires, so a cache's leakage grows with the bits it routes, not with its cells
# alone: McPAT's 32 KB 4-way L1 (the Cortex-A9 template moved to 45 nm hp, 360 K) leaks 0.042, 0.041, 0.055 and
# 0.119 W (gate 2.4, 2.5, 4.0, 10.3 mW) with 8, 16, 32 and 64-byte lines. Without the repeaters the circuit
# estimate's ratio to McPAT fell 0.53 -> 0.16 over those lines (one law per group could not price both the A9's
# 8-byte lines and the other templates' 32-64: with the A9 left out its L1s leaked 4-5x McPAT's); with them it
# stays 0.46-0.65, and across the six templates' L1s 0.33-0.76 where it was 0.11-0.51.
HTREE_REPEATER_LEAK_F_PER_MM = 4500.0
# Standard-cell area by device type: low-power libraries use shorter cells with smaller drive strengths
# (7-9 track vs 12 track) than high-performance ones.
LOGIC_AREA_SCALE = {"hp": 1.0, "lstp": 0.8, "lop": 0.6}


@dataclass(frozen=True)
class Block:
    area_mm2: float
    c_read: float           # F switched per read (or per operation for logic)
    c_write: float          # F switched per write
    c_search: float         # F switched per CAM search (0 for RAM / logic)
    leak_um: float          # width of transistors leaking subthreshold current, um
    gate_um: float          # width of transistors with gate leakage, um

    def scaled(self, k: float) -> "Block":
        return Block(self.area_mm2 * k, self.c_read * k, self.c_write * k, self.c_search * k,
                     self.leak_um * k, self.gate_um * k)

    def __add__(self, o: "Block") -> "Block":
        return Block(self.area_mm2 + o.area_mm2, self.c_read + o.c_read, self.c_write + o.c_write,
                     self.c_search + o.c_search, self.leak_um + o.leak_um, self.gate_um + o.gate_um)


ZERO = Block(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def _check(name: str, value: float, lo: float, hi: float | None = None) -> None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value < lo or \
            (hi is not None and value > hi):
        rng = f"{lo:g} to {hi:g}" if hi is not None else f">= {lo:g}"
        raise ValueError(f"{name}={value!r} is out of range: allowed {rng}")


@dataclass(frozen=True)
class _Geometry:
    F: float                # layout feature size, um
    ports: int
    cell_w_F: float
    cell_h_F: float
    bank_entries: int
    rows: int               # per sub-array
    cols: int
    nsub: int               # sub-arrays per bank
    sub_h_um: float         # one sub-array's height: cells and its column strip (precharge, mux, sense, write)


def _geometry(tech: Technology, entries: int, width_bits: int, ports: int, cam: bool, search_ports: int,
              banks: int) -> _Geometry:
    """The array's organisation (cells per port, sub-arrays of at most 256 x 512): geometry in units of F; areas
    use the layout feature size."""
    ports = max(1, ports)
    F = tech.F_array_um
    cwf = SRAM_CELL_W_F + 2 * PORT_PITCH_F * (ports - 1)
    chf = SRAM_CELL_H_F + PORT_PITCH_F * (ports - 1)
    if cam:
        sp = max(1, search_ports)
        cwf = cwf * 1.5 + 2 * PORT_PITCH_F * (sp - 1)
        chf = chf * 1.2 + PORT_PITCH_F * (sp - 1)
    bank_entries = max(1, math.ceil(entries / banks))
    bank_bits = bank_entries * width_bits
    rows = min(bank_entries, MAX_SUB_ROWS)
    cols = min(math.ceil(bank_bits / rows), MAX_SUB_COLS)
    nsub = max(1, math.ceil(bank_bits / (rows * cols)))
    return _Geometry(F, ports, cwf, chf, bank_entries, rows, cols, nsub, (rows * chf + 150.0 * ports) * F)


def array_height_mm(tech: Technology, entries: int, width_bits: int, *, ports: int = 1) -> float:
    """Height of an array's sub-arrays stacked in a square-ish bank (mm): what a router's crossbar runs beside
    (McPAT's router is its input ports' buffers high and buffers plus crossbar wide)."""
    g = _geometry(tech, entries, width_bits, ports, False, 0, 1)
    return g.sub_h_um * math.ceil(math.sqrt(g.nsub)) * 1e-3


def array(tech: Technology, entries: int, width_bits: int, *, rd_ports: int = 0, wr_ports: int = 0,
          rw_ports: int = 1, cam: bool = False, search_ports: int = 0, banks: int = 1,
          access_bits: int | None = None, route_bits: int = 0, select_bits: int = 0, wire: str = "global",
          name: str = "array") -> Block:
    """A RAM or CAM array of ``entries`` rows of ``width_bits`` bits.

    ``access_bits`` is how many bits one read delivers (default: one row). ``route_bits``: the bits the bank's
    H-tree carries per port between its sub-arrays and its edge (a cache's output width, CACTI's ``out_w``; 0: no
    routing strip beyond the sub-arrays' own overhead), on wires of type ``wire`` (``WIRE_PITCH_F``), with
    ``select_bits`` more per port (a set-associative cache's way-select lines from its tag array).
    """
    _check(f"{name}.entries", entries, 1)
    _check(f"{name}.width_bits", width_bits, 1)
    _check(f"{name}.banks", banks, 1)
    for pn, pv in (("rd_ports", rd_ports), ("wr_ports", wr_ports), ("rw_ports", rw_ports),
                   ("search_ports", search_ports)):
        _check(f"{name}.{pn}", pv, 0, 64)
    g = _geometry(tech, entries, width_bits, rd_ports + wr_ports + rw_ports, cam, search_ports, banks)
    ports, cwf, chf, cw = g.ports, g.cell_w_F, g.cell_h_F, g.cell_w_F * g.F
    F, Fc = g.F, tech.F_um
    bank_entries, rows, cols, nsub = g.bank_entries, g.rows, g.cols, g.nsub
    lr = math.log2(max(rows, 2))
    dec_w = (60.0 + 10.0 * lr) * F * ports
    sub_area_um2 = g.sub_h_um * (cols * cw + dec_w)
    bank_um2 = nsub * sub_area_um2 * (1.0 + 0.06 * math.log2(nsub + 1))
    # per bank: predecoders, control, and the input/output latches and drivers of every port
    abits0 = width_bits if access_bits is None else max(1, int(access_bits))
    bank_um2 += (5.0e5 + abits0 * ports * 400.0) * F * F
    cell_side_um = math.sqrt(bank_um2)
    if route_bits:
        # The H-tree: every port's data in and out (``route_bits`` each way), the row address and the way
        # selects run as a strip across the bank in both directions, so the bank's side grows by the strip's
        # width (side = sqrt(cells and periphery) + strip). At global pitch this is what makes a 64-byte-line, two-ported L1 several times
        # a one-ported 8-byte-line one, as CACTI builds them; at local pitch (embedded) a third of it.
        if wire not in WIRE_PITCH_F:
            raise ValueError(f"{name}.wire={wire!r}: allowed {sorted(WIRE_PITCH_F)}")
        addr = math.ceil(math.log2(max(entries, 2)))
        routed = ports * (2 * int(route_bits) + addr + int(select_bits))
        strip_um = routed * WIRE_PITCH_F[wire] * F
        bank_um2 = (cell_side_um + strip_um) ** 2
        # its repeaters: every routed wire crosses the bank once (in the node's own length units)
        tree_leak_um = routed * math.sqrt(bank_um2) * (tech.F_um / F) * 1e-3 * HTREE_REPEATER_LEAK_F_PER_MM * \
            tech.F_leak_um
    else:
        tree_leak_um = 0.0
    area_mm2 = banks * bank_um2 * 1e-6 * (1.0 + 0.02 * (banks - 1) ** 0.5)

    cg = tech.c_gate_min
    cwu = tech.c_wire_per_um
    abits = width_bits if access_bits is None else max(1, int(access_bits))
    c_bl = rows * (0.5 * cg + cwu * chf * Fc)
    c_wl = cols * (2.0 * cg + cwu * cwf * Fc)
    c_dec = (8.0 + 4.0 * lr) * 4.0 * cg
    n_act = min(nsub, max(1, math.ceil(abits / cols)))
    side_um = cell_side_um * Fc / F   # the wires' energy over the cells' span (CACTI: about the same at any pitch)
    addr_bits = math.ceil(math.log2(max(bank_entries, 2)))
    c_tree = 0.5 * side_um * cwu * (abits + addr_bits) * (1.0 + 0.5 * math.log2(nsub + 1))
    c_sa = abits * 6.0 * cg
    c_read = n_act * (c_wl + 0.3 * cols * c_bl + c_dec) + c_sa + c_tree
    c_write = n_act * (c_wl + 0.3 * cols * c_bl + c_dec) + abits * 0.7 * c_bl + c_tree
    c_search = 0.0
    if cam:
        # search lines drive every row of the searched width; match lines precharge and discharge per entry
        c_search = bank_entries * width_bits * 2.5 * cg + bank_entries * (width_bits * cwu * cwf * Fc) + c_tree

    Fl = tech.F_leak_um
    cell_leak = (3.0 + 1.0 * (ports - 1)) * Fl
    leak_um = entries * width_bits * cell_leak + banks * nsub * ports * (rows * 6.0 + cols * 12.0) * Fl
    # the H-tree's repeaters: half their width off (subthreshold), all of it under gate bias (gate leakage)
    gate_um = leak_um * 1.2 + banks * tree_leak_um * 2.0
    leak_um += banks * tree_leak_um
    return Block(area_mm2, c_read, c_write, c_search, leak_um, gate_um)


def cache_block(tech: Technology, capacity_B: int, block_B: int, assoc: int, *, banks: int = 1,
                rw_ports: int = 1, rd_ports: int = 0, wr_ports: int = 0, paddr_bits: int = 52,
                sequential: bool = False, wire: str | None = None, name: str = "cache") -> tuple[Block, Block]:
    """Tag and data arrays of a cache. ``assoc`` 0 means fully associative (CAM tags). ``wire``: the H-tree's wire
    type (``array``'s ``wire``; its data H-tree carries one line per port, CACTI's ``out_w``); None: no H-tree
    strip."""
    _check(f"{name}.capacity_B", capacity_B, 1)
    _check(f"{name}.block_B", block_B, 1)
    _check(f"{name}.assoc", assoc, 0, 4096)
    lines = max(1, capacity_B // block_B)
    fully = assoc == 0 or assoc >= lines
    ways = lines if fully else assoc
    sets = max(1, lines // ways)
    tag_bits = max(1, paddr_bits - int(math.log2(block_B)) - (0 if fully else int(math.log2(sets)))) + 4
    kw = dict(rd_ports=rd_ports, wr_ports=wr_ports, rw_ports=rw_ports, banks=banks)
    data_kw = dict(kw, route_bits=block_B * 8, wire=wire) if wire is not None else kw
    if fully:
        tag = array(tech, lines, tag_bits, cam=True, access_bits=tag_bits, name=name + ".tag", **kw)
        data = array(tech, lines, block_B * 8, access_bits=block_B * 8, name=name + ".data", **data_kw)
    else:
        tag = array(tech, sets, tag_bits * ways, access_bits=tag_bits * ways, name=name + ".tag", **kw)
        rd = block_B * 8 * (1 if sequential else ways)
        if wire is not None:
            data_kw = dict(data_kw, select_bits=ways)
        data = array(tech, sets, block_B * 8 * ways, access_bits=rd, name=name + ".data", **data_kw)
    return tag, data


def logic(tech: Technology, gates: float, *, activity: float = 0.15, name: str = "logic") -> Block:
    """A logic block of ``gates`` NAND2 equivalents; ``activity`` is the fraction of gates toggling per operation."""
    _check(f"{name}.gates", gates, 0)
    F = tech.F_um
    area_mm2 = gates * GATE_AREA_F2 * tech.F2_mm2 * LOGIC_AREA_SCALE[tech.device]
    c_gate = 3.0 * tech.c_gate_min + tech.c_wire_per_um * 8.0 * F * 10.0
    c_op = gates * activity * c_gate
    leak_um = gates * 2.0 * tech.F_leak_um     # about half the devices off, stack effect included
    gate_um = gates * 4.0 * tech.F_leak_um
    return Block(area_mm2, c_op, c_op, 0.0, leak_um, gate_um)


def wires(tech: Technology, n_wires: int, length_mm: float, *, pitch_F: float = 8.0, repeated: bool = True,
          routed_over: float = 0.0) -> Block:
    """A bundle of global wires (buses, links): capacitance per transfer when every wire toggles."""
    _check("wires.n_wires", n_wires, 0)
    _check("wires.length_mm", length_mm, 0)
    F = tech.F_um
    width_mm = n_wires * pitch_F * F * 1e-3
    area = width_mm * length_mm * (1.0 - routed_over)
    c = n_wires * length_mm * tech.c_wire_per_mm * (1.3 if repeated else 1.0)
    # repeaters: one per 0.5 mm per wire, 40x minimum size
    rep = n_wires * max(1.0, length_mm / 0.5) * 40.0 * 2 * F if repeated else 0.0
    area += rep * 4 * F * 1e-6 * 10
    leak = rep * tech.F_leak_um / F
    return Block(area, c, c, 0.0, leak * 0.5, leak)
