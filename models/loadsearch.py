"""The highest open-loop offered load a server sustains with less than a given loss (1% by default).

Each probe is a short detailed run at one offered load per port (`Client.offered_mpps`). Its loss is the larger of
`client.loss` (frames the NIC dropped / frames sent in the measured phase) and the shortfall of the answered rate
below the offered one (1 - client.throughput_mrps / client.offered_mpps): a short run at a rate the server cannot
sustain may end before the RX FIFO and rings overflow, but its backlog, and so its answered rate, shows it. The search brackets the answer
between 0 and an upper bound (by default the line rate of the port for the smallest frame) and bisects: a probe
with too much loss lowers the upper end (it backs off), one within the target raises the lower end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .sim import RunResult, simulate
from .system import System

# Smallest frame the wire carries (60 bytes without FCS) plus 24 bytes of preamble, FCS and gap.
MIN_WIRE_FRAME = 84


@dataclass
class Probe:
    offered_mpps: float
    loss: float
    throughput_mrps: float
    result: RunResult = field(repr=False)


@dataclass
class SearchResult:
    best: Probe | None
    probes: list[Probe]

    @property
    def offered_mpps(self) -> float:
        return self.best.offered_mpps if self.best else 0.0


def line_rate_mpps(system: System) -> float:
    """Frames per second (millions) one port carries at its line rate with the smallest frames."""
    return min(n.port_gbps for n in system.active_nics()) * 1e9 / 8 / MIN_WIRE_FRAME / 1e6


def probe(make_system: Callable[[float], System], offered_mpps: float) -> Probe:
    system = make_system(offered_mpps)
    if system.mode != "detailed":
        raise ValueError("the loss search needs detailed timing (System.mode = 'detailed'): the NIC is timed there")
    r = simulate(system)
    s = r.stats
    throughput = s.get("client.throughput_mrps", 0.0)
    offered = s.get("client.offered_mpps", 0.0)
    shortfall = 1.0 - throughput / offered if offered > 0 else 0.0
    return Probe(offered_mpps, max(s.get("client.loss", 0.0), shortfall), throughput, r)


def search(make_system: Callable[[float], System], *, max_loss: float = 0.01, high: float | None = None,
           steps: int = 6, progress: Callable[[Probe], None] | None = None) -> SearchResult:
    """Bisect the offered load per port (M frames/s) for the highest with loss < `max_loss`. `make_system(rate)`
    builds the system for one probe (detailed mode, client.offered_mpps = rate). `high` defaults to the line
    rate; the first probe is there, so a server that keeps up with line rate is found at once."""
    if high is None:
        high = line_rate_mpps(make_system(1.0))
    lo, hi = 0.0, high
    probes: list[Probe] = []
    best: Probe | None = None
    rate = hi
    for _ in range(max(1, steps)):
        p = probe(make_system, rate)
        probes.append(p)
        if progress:
            progress(p)
        if p.loss < max_loss:
            best = p if best is None or p.offered_mpps > best.offered_mpps else best
            lo = rate
            if rate >= hi:
                break
        else:
            hi = rate
        rate = (lo + hi) / 2
    return SearchResult(best, probes)
