"""Parameters of the DRAM model (read by kvsim-timing's `dram.rs`).

A `MemoryController` drives one or more DDR channels. Its JEDEC timings come from a named preset (the table, with
the source of every value, is in models/timing/src/dram.rs); each timing parameter here overrides the preset's
value when set, and stays None to keep it. Timings in clock cycles are in DRAM clocks (nCK, JEDEC's unit).
"""

from __future__ import annotations

from .params import Param, ParamError, SimObject

ADDRESS_FIELDS = ("row", "rank", "bank", "bankgroup", "column", "channel")


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _nck(doc: str, hi: int = 2000) -> Param:
    return Param.Count(None, doc + " in nCK (None = the preset's)", min=1, max=hi)


class MemoryController(SimObject):
    """A DDR memory controller: channels, ranks, banks, open-page row buffers, FR-FCFS, refresh."""

    preset = Param.Enum("DDR4-2400", "JEDEC speed grade whose timings apply unless overridden below: "
                        "'DDR4-2400' (17-17-17, the target) or 'DDR3-1600' (11-11-11, the Xeon baseline)",
                        choices=("DDR4-2400", "DDR3-1600"))
    channels = Param.Count(1, "independent 64-bit channels behind this controller (power of two)", min=1, max=16)
    ranks = Param.Count(1, "ranks per channel (power of two; assumed 1)", min=1, max=8)
    bank_groups = Param.Count(None, "bank groups per rank (None = the preset's: 4 for DDR4, 1 for DDR3)",
                              min=1, max=8)
    banks_per_group = Param.Count(None, "banks per bank group (None = the preset's: 4 for DDR4, 8 for DDR3)",
                                  min=1, max=16)
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
    t_ck = Param.Time(None, "DRAM clock period tCK (None = the preset's)", min="100ps", max="10ns")
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
    burst_length = Param.Count(None, "burst length BL in beats (None = the preset's 8); data takes BL/2 nCK",
                               min=2, max=16)
    t_rfc = Param.Time(None, "refresh cycle time tRFC: a rank is blocked this long per refresh (None = preset's)",
                       min="1ns", max="10us")
    t_refi = Param.Time(None, "average refresh interval tREFI (None = the preset's 7.8 us)",
                        min="100ns", max="100us")

    def validate(self) -> None:
        super().validate()
        fields = self.address_map.split(":")
        if sorted(fields) != sorted(ADDRESS_FIELDS):
            raise ParamError(f"MemoryController.address_map = {self.address_map!r}: must name each of "
                             f"{', '.join(ADDRESS_FIELDS)} once, separated by ':'")
        for name in ("channels", "ranks", "bank_groups", "banks_per_group", "row_size"):
            value = getattr(self, name)
            if value is not None and not _is_pow2(value):
                raise ParamError(f"MemoryController.{name} = {value}: must be a power of two")
        if not self.write_low_watermark < self.write_high_watermark <= self.write_queue:
            raise ParamError("MemoryController: need write_low_watermark < write_high_watermark <= write_queue, "
                             f"not {self.write_low_watermark}, {self.write_high_watermark}, {self.write_queue}")
