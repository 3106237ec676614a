"""A cache's miss, fill, prefetch and write-back buffers: organised, and priced at peak and at runtime, as McPAT 1.3
builds and counts them (its core.cc, read to learn; no code carried over).

Each buffer is a small fully associative cache: a CAM of line addresses (the physical address and a few state bits)
searched on every access, beside a RAM of the entries' data (a line; the miss buffer also keeps the address and the
line's index), with as many read/write and search ports as the cache has. Every counted buffer event is one search
and one write.

What makes them matter is how differently they are counted at peak and at runtime (issue 26, session 12):
* at **peak** (McPAT's thermal-design rate) every buffer is searched and written once per search port per cycle,
  times the unit's duty cycle; the write-back buffer without the duty cycle (McPAT 1.3's peak leaves it off);
* at **runtime** only the cache's misses reach them: a write-back data cache's buffers are searched and written
  once per write miss, a write-through one's (and an instruction cache's) once per read miss.
On McPAT's exported Xeon (22 nm, a 32 KB L1 data cache with two ports and ten-entry buffers, duty cycle 0.25) the
buffers are 63% of the data cache's peak and under 1% of its runtime (1.46 nJ per write miss against 0.725 nJ a
read, for 27,522 write misses against 11.5 M accesses). Priced as a share of the array, a fitted runtime-to-peak
ratio had to carry the buffers' peak share; it did so through the core's x86 term (0.235 on the Xeon against 0.389
on a non-x86 core with the same L1), which left the Xeon's L1 runtime at a third of McPAT's.
"""

from __future__ import annotations

from dataclasses import dataclass

from .blocks import ZERO, Block, array
from .config import CacheConfig
from .tech import Technology

# State bits a buffer entry's tag carries beyond the physical address (McPAT's EXTRA_TAG_BITS: 5).
BUFFER_TAG_STATE_BITS = 5


@dataclass(frozen=True)
class Buffers:
    """The four buffers of one cache (ZERO where the cache has none of that kind)."""

    miss: Block
    fill: Block
    prefetch: Block
    writeback: Block

    @property
    def total(self) -> Block:
        return self.miss + self.fill + self.prefetch + self.writeback

    @property
    def on_duty(self) -> float:
        """F of one event (a search and a write) in each of the buffers McPAT's peak scales by the duty cycle."""
        return sum(event_c(b) for b in (self.miss, self.fill, self.prefetch))

    @property
    def per_event(self) -> float:
        """F of one counted event (a search and a write) in every buffer: what one triggering miss costs."""
        return self.on_duty + event_c(self.writeback)

    def peak_c(self, search_ports: int, duty: float) -> float:
        """F switched per cycle at peak: each buffer searched and written once per search port per cycle, the miss,
        fill and prefetch buffers times the duty cycle, the write-back buffer without it (McPAT 1.3's peak)."""
        return search_ports * (duty * self.on_duty + event_c(self.writeback))


def event_c(b: Block) -> float:
    """One buffer event: a search (CAM match and the matching entry's data read) and a write."""
    return b.c_search + b.c_write


def _buffer(t: Technology, entries: int, tag_bits: int, data_bits: int, ports: int, name: str) -> Block:
    if entries <= 0:
        return ZERO
    tag = array(t, entries, tag_bits, cam=True, search_ports=ports, rw_ports=ports, name=f"{name}.tag")
    data = array(t, entries, data_bits, rw_ports=ports, name=f"{name}.data")
    return Block(tag.area_mm2 + data.area_mm2, tag.c_read + data.c_read, tag.c_write + data.c_write,
                 tag.c_search + data.c_read, tag.leak_um + data.leak_um, tag.gate_um + data.gate_um)


def build(t: Technology, c: CacheConfig, paddr_bits: int, ports: int) -> Buffers:
    """The buffers of cache ``c`` (``c.buffers``: miss, fill, prefetch, write-back entries) with ``ports``
    read/write and search ports. A write-through cache has no write-back buffer."""
    miss, fill, pref, wb = (max(0, int(x)) for x in c.buffers)
    ports = max(1, int(ports))
    tag = paddr_bits + BUFFER_TAG_STATE_BITS
    line = c.block_B * 8
    index_bits = max(0, (max(1, c.capacity_B // c.block_B) - 1).bit_length())
    return Buffers(
        # a miss buffer entry keeps the address and the line's index with the line (McPAT's layout)
        miss=_buffer(t, miss, tag, paddr_bits + index_bits + line, ports, f"{c.name}.miss_buffer"),
        fill=_buffer(t, fill, tag, line, ports, f"{c.name}.fill_buffer"),
        prefetch=_buffer(t, pref, tag, line, ports, f"{c.name}.prefetch_buffer"),
        writeback=_buffer(t, wb, tag, line, ports, f"{c.name}.writeback_buffer") if c.write_back else ZERO,
    )
