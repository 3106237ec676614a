"""Parameters of the DRAM model (read by kvsim-timing's `dram.rs`).

A `MemoryController` drives one or more DDR channels. Its JEDEC timings come from a named preset (`PRESETS` below,
with the source of every value: the one table; the Rust side gets a generated copy and reads only resolved values);
each timing parameter overrides the preset's value when set, and stays None to keep it. `to_dict()` (what the
engine receives and config.json shows) resolves every None to the preset's value. Timings in clock cycles are in
DRAM clocks (nCK, JEDEC's unit).
"""

from __future__ import annotations

from .params import Param, ParamError, SimObject
from .stacked import NandFlash, StackedDram

# JEDEC speed grades. Times in ps (t_ck, t_rfc, t_refi), everything else in nCK; nCK = ceil(ns / tCK) where JEDEC
# gives ns.
PRESETS: dict[str, dict[str, int]] = {
    # DDR4-2400R (17-17-17), JEDEC JESD79-4B speed-bin and timing-parameter tables, 8 Gb x8 devices (1 KB page).
    "DDR4-2400": {
        "t_ck": 833,            # tCK(avg) 0.833 ns (1200 MHz)
        "t_cl": 17,             # CL 17 (DDR4-2400R: tAA 14.16 ns)
        "t_cwl": 12,            # CWL 12 (first CWL set for 2400)
        "t_rcd": 17,            # tRCD 14.16 ns
        "t_rp": 17,             # tRP 14.16 ns
        "t_ras": 39,            # tRAS 32 ns
        "t_rrd_s": 4,           # tRRD_S(1K) max(4 nCK, 3.3 ns)
        "t_rrd_l": 6,           # tRRD_L(1K) max(4 nCK, 4.9 ns)
        "t_faw": 26,            # tFAW(1K) max(20 nCK, 21 ns)
        "t_ccd_s": 4,           # tCCD_S 4 nCK
        "t_ccd_l": 6,           # tCCD_L max(5 nCK, 5 ns)
        "t_wr": 18,             # tWR 15 ns
        "t_wtr_s": 3,           # tWTR_S max(2 nCK, 2.5 ns)
        "t_wtr_l": 9,           # tWTR_L max(4 nCK, 7.5 ns)
        "t_rtp": 9,             # tRTP max(4 nCK, 7.5 ns)
        "burst_length": 8,      # BL8: 4 nCK of data on a 64-bit channel = 64 bytes
        "t_rfc": 350_000,       # tRFC1 for 8 Gb devices: 350 ns
        "t_refi": 7_800_000,    # tREFI 7.8 us (normal temperature range)
        "bank_groups": 4,       # x8 DDR4: 4 bank groups of 4 banks
        "banks_per_group": 4,
    },
    # DDR3-1600K (11-11-11), JEDEC JESD79-3F speed bin DDR3-1600K and timing table, 4 Gb x8 devices (1 KB page).
    "DDR3-1600": {
        "t_ck": 1250,           # tCK(avg) 1.25 ns (800 MHz)
        "t_cl": 11,             # CL 11 (13.75 ns)
        "t_cwl": 8,             # CWL 8 for 1600
        "t_rcd": 11,            # tRCD 13.75 ns
        "t_rp": 11,             # tRP 13.75 ns
        "t_ras": 28,            # tRAS 35 ns
        "t_rrd_s": 5,           # tRRD(1K) max(4 nCK, 6 ns); DDR3 has no bank groups, so _S = _L
        "t_rrd_l": 5,
        "t_faw": 24,            # tFAW(1K) 30 ns
        "t_ccd_s": 4,           # tCCD 4 nCK
        "t_ccd_l": 4,
        "t_wr": 12,             # tWR 15 ns
        "t_wtr_s": 6,           # tWTR max(4 nCK, 7.5 ns)
        "t_wtr_l": 6,
        "t_rtp": 6,             # tRTP max(4 nCK, 7.5 ns)
        "burst_length": 8,
        "t_rfc": 260_000,       # tRFC for 4 Gb devices: 260 ns
        "t_refi": 7_800_000,    # tREFI 7.8 us
        "bank_groups": 1,       # 8 banks, no bank groups
        "banks_per_group": 8,
    },
}
PRESET_FIELDS = tuple(PRESETS["DDR4-2400"])


class _PresetParam(Param):
    """A parameter that is None in Python until resolved from the preset: the engine only ever sees a value, so
    its Rust mirror is not optional."""

    @property
    def rust_type(self) -> str:
        return super().rust_type.removeprefix("Option<").removesuffix(">")

ADDRESS_FIELDS = ("row", "rank", "bank", "bankgroup", "column", "channel")


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _nck(doc: str, hi: int = 2000) -> Param:
    return _PresetParam.Count(None, doc + " in nCK (None = the preset's)", min=1, max=hi)


MEMORY_KINDS = ("ddr", "dram3d", "flash")
# The kinds the engine builds behind the caches: all three (kvsim_timing::socket_memory calls
# kvsim_timing::stacked::backing for each socket). Kept as a name so a future kind can be declared before the
# engine builds it, and refused until then rather than silently run on DDR.
ENGINE_BACKING_KINDS = MEMORY_KINDS


class MemoryController(SimObject):
    """A DDR memory controller: channels, ranks, banks, open-page row buffers, FR-FCFS, refresh. With `kind` the
    socket's backing memory may instead be a 3D-stacked DRAM or 3D NAND flash (models/stacked.py)."""

    kind = Param.Enum("ddr", "what backs the caches: 'ddr' (this controller's DDR channels), 'dram3d' (the 3D-stacked "
                      "DRAM in `dram3d`, Mercury and KeyVault) or 'flash' (the 3D NAND in `flash`, Iridium)",
                      choices=MEMORY_KINDS)
    dram3d = Param.Child(StackedDram, "the 3D-stacked DRAM, when kind = 'dram3d'")
    flash = Param.Child(NandFlash, "the 3D NAND flash, when kind = 'flash'")
    preset = Param.Enum("DDR4-2400", "JEDEC speed grade whose timings apply unless overridden below: "
                        "'DDR4-2400' (17-17-17, the target) or 'DDR3-1600' (11-11-11, the Xeon baseline)",
                        choices=("DDR4-2400", "DDR3-1600"))
    channels = Param.Count(1, "independent 64-bit channels behind this controller (any count: lines interleave "
                           "modulo the count)", min=1, max=16)
    ranks = Param.Count(1, "ranks per channel (power of two; assumed 1)", min=1, max=8)
    bank_groups = _PresetParam.Count(None, "bank groups per rank (None = the preset's: 4 for DDR4, 1 for DDR3)",
                                     min=1, max=8)
    banks_per_group = _PresetParam.Count(None, "banks per bank group (None = the preset's: 4 for DDR4, 8 for "
                                         "DDR3)", min=1, max=16)
    row_size = Param.Size("8KiB", "row (page) size of a rank: 1 KB per x8 device x 8 devices (assumed)",
                          min="512B", max="64KiB")
    address_map = Param.Str("row:rank:bank:column:bankgroup:channel",
                            "how a line address splits into fields, most significant first (assumed: bank groups "
                            "interleave consecutive lines so a stream alternates tCCD_S, not tCCD_L)")
    queue_window = Param.Count(32, "requests the FR-FCFS scheduler looks at: the oldest row hit among them goes "
                               "first, else the oldest (1 = FCFS)", min=1, max=1024)
    write_queue = Param.Count(64, "posted writes buffered before they must drain", min=1, max=4096)
    write_high_watermark = Param.Count(48, "write-queue fill at which writes drain ahead of reads", min=1, max=4096)
    write_low_watermark = Param.Count(16, "write-queue fill at which a drain stops", min=0, max=4096)
    ctrl_latency = Param.Time("15ns", "fixed latency added to every access: LLC-to-controller path, controller "
                              "pipeline and PHY, both ways (assumed)", min="0ns", max="1us")
    t_ck = _PresetParam.Time(None, "DRAM clock period tCK (None = the preset's)", min="100ps", max="10ns")
    t_cl = _nck("read CAS latency CL")
    t_cwl = _nck("write CAS latency CWL")
    t_rcd = _nck("ACT to column command tRCD")
    t_rp = _nck("precharge period tRP")
    t_ras = _nck("ACT to PRE tRAS")
    t_rrd_s = _nck("ACT to ACT, different bank group tRRD_S")
    t_rrd_l = _nck("ACT to ACT, same bank group tRRD_L")
    t_faw = _nck("four-activate window tFAW")
    t_ccd_s = _nck("column to column, different bank group tCCD_S")
    t_ccd_l = _nck("column to column, same bank group tCCD_L")
    t_wr = _nck("write recovery tWR (end of write data to PRE)")
    t_wtr_s = _nck("end of write data to read, different bank group tWTR_S")
    t_wtr_l = _nck("end of write data to read, same bank group tWTR_L")
    t_rtp = _nck("read to precharge tRTP")
    burst_length = _PresetParam.Count(None, "burst length BL in beats (None = the preset's 8); data takes BL/2 "
                                      "nCK", min=2, max=16)
    t_rfc = _PresetParam.Time(None, "refresh cycle time tRFC: a rank is blocked this long per refresh "
                              "(None = preset's)", min="1ns", max="10us")
    t_refi = _PresetParam.Time(None, "average refresh interval tREFI (None = the preset's 7.8 us)",
                               min="100ns", max="100us")

    def resolved_timings(self) -> dict[str, int]:
        """Every preset field: the override when set, else the preset's value."""
        base = PRESETS[self.preset]
        return {k: (base[k] if getattr(self, k) is None else getattr(self, k)) for k in PRESET_FIELDS}

    def to_dict(self) -> dict:
        out = super().to_dict()
        out.update(self.resolved_timings())
        return out

    def peak_channel_bandwidth(self) -> float:
        """Bytes per second one 64-bit channel moves at most: 8 bytes per beat, two beats per DRAM clock."""
        return 16 / (self.resolved_timings()["t_ck"] * 1e-12)

    def validate(self) -> None:
        super().validate()
        fields = self.address_map.split(":")
        if sorted(fields) != sorted(ADDRESS_FIELDS):
            raise ParamError(f"MemoryController.address_map = {self.address_map!r}: must name each of "
                             f"{', '.join(ADDRESS_FIELDS)} once, separated by ':'")
        timings = self.resolved_timings()
        # Channels may be any count (the address map splits the line address in mixed radix, so the channel digit
        # is the line number modulo the count); the in-rank fields stay powers of two, as real devices are.
        for name in ("ranks", "bank_groups", "banks_per_group", "row_size"):
            value = timings[name] if name in timings else getattr(self, name)
            if value is not None and not _is_pow2(value):
                raise ParamError(f"MemoryController.{name} = {value}: must be a power of two")
        if not self.write_low_watermark < self.write_high_watermark <= self.write_queue:
            raise ParamError("MemoryController: need write_low_watermark < write_high_watermark <= write_queue, "
                             f"not {self.write_low_watermark}, {self.write_high_watermark}, {self.write_queue}")
        if self.kind not in ENGINE_BACKING_KINDS:
            raise ParamError(f"MemoryController.kind = {self.kind!r}: the engine does not yet build this memory "
                             f"behind the caches (allowed now: {', '.join(map(repr, ENGINE_BACKING_KINDS))})")
        if timings["burst_length"] % 2:
            raise ParamError(f"MemoryController.burst_length = {timings['burst_length']}: must be even (BL/2 nCK)")


def rust_constants() -> str:
    """The preset table for the generated Rust mirror (models.codegen appends it): one table, written here."""
    lines = ["/// A DRAM preset of models/dram.py: the resolved value of every MemoryController timing field.",
             "#[derive(Debug, Clone, Copy, PartialEq)]", "pub struct DramPreset {", "    pub name: &'static str,"]
    lines += [f"    pub {k}: u64," for k in PRESET_FIELDS]
    lines += ["}", ""]
    names = []
    for name, values in PRESETS.items():
        const = "DRAM_PRESET_" + name.replace("-", "_").upper()
        names.append(const)
        lines.append(f"pub const {const}: DramPreset = DramPreset {{")
        lines.append(f"    name: {name!r},".replace("'", '"'))
        lines += [f"    {k}: {values[k]}," for k in PRESET_FIELDS]
        lines += ["};", ""]
    lines += [f"pub const DRAM_PRESETS: &[DramPreset] = &[{', '.join(names)}];", ""]
    return "\n".join(lines)
