"""The capacity of a server: the highest open-loop offered load it sustains with less than a given loss (1% by
default, kvs-workload.md), found to a stated relative resolution (1% by default).

A probe runs the server at one offered load per port (`Client.offered_mpps`, M frames/s) and measures its loss: the
larger of `client.loss` (frames the NIC dropped / frames sent) and the shortfall of the answered rate below the
offered one. A short run at a rate the server cannot sustain may end before the RX FIFO overflows, but its backlog,
and so its answered rate, shows it.

The search:
1. Saturate: probe at the upper bound (by default the line rate of the port for the smallest frame). If that
   sustains, the capacity is the line rate (the network, not the server, is the limit) and we stop.
2. Bracket: the saturating probe's answered rate is an estimate of the capacity. Probe there, then step away from
   it geometrically (by 2, 4, 8 ... times the resolution) until one probe sustains and one does not.
3. Refine: bisect (geometric midpoint) until the bracket's upper end is within the resolution of its lower end.
The answer is the highest probe that sustained: the true capacity lies in [answer, answer x (1 + resolution)).

The search does not care what answers a probe: `search` takes any function offered-load -> Outcome (a simulated
server in `simulated_server`, a synthetic model in the tests), so its convergence is tested without simulating.
Starting from the measured answered rate, not from the line rate, is what makes a slow server (an in-order
single-issue core answers a few percent of line rate) come out right instead of quantised to zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from models.params import ParamError
from models.system import System

# Smallest frame the wire carries (60 bytes without FCS) plus 24 bytes of preamble, FCS and gap.
MIN_WIRE_FRAME = 84
DEFAULT_MAX_LOSS = 0.01        # kvs-workload.md: throughput = highest sustained rate with < 1% loss per port
DEFAULT_RESOLUTION = 0.01      # relative width of the final bracket (the default)
MAX_PROBES = 40                # a bound so that a server whose loss is not monotonic in load cannot loop forever


@dataclass
class Outcome:
    """What one probe measured. `answered_mpps` is per port, in offered-load units (frames/s, millions)."""
    loss: float
    answered_mpps: float
    stats: dict[str, float] = field(default_factory=dict, repr=False)
    result: Any = field(default=None, repr=False)    # the simulated run (models.sim.RunResult), when there is one


@dataclass
class Probe:
    offered_mpps: float
    loss: float
    answered_mpps: float
    stage: str                     # 'saturate', 'bracket' or 'refine'
    stats: dict[str, float] = field(default_factory=dict, repr=False)
    result: Any = field(default=None, repr=False)

    def sustained(self, max_loss: float) -> bool:
        return self.loss < max_loss


@dataclass
class SearchResult:
    best: Probe | None             # the highest probe that sustained (None: not even the lowest one)
    probes: list[Probe]
    resolution: float
    max_loss: float
    upper_mpps: float              # the lowest offered load that failed (inf when the line rate sustained)

    @property
    def offered_mpps(self) -> float:
        """The capacity per port (M frames/s): the highest offered load that sustained."""
        return self.best.offered_mpps if self.best else 0.0

    @property
    def line_limited(self) -> bool:
        return math.isinf(self.upper_mpps)

    def table(self) -> list[dict[str, Any]]:
        """The probes as rows, in the order they ran."""
        return [{"probe": i, "stage": p.stage, "offered_mpps": p.offered_mpps, "loss": p.loss,
                 "answered_mpps": p.answered_mpps, "sustained": p.sustained(self.max_loss)}
                for i, p in enumerate(self.probes)]


def line_rate_mpps(system: System) -> float:
    """Frames per second (millions) one port carries at its line rate with the smallest frames (the slowest port
    of the system's NICs, since the client offers the same load on every port). A port behind a KVD switch
    carries at most its share of the switch's uplink."""
    nics = system.active_nics()
    if not nics:
        raise ParamError("the capacity search needs a NIC: System.nic.enabled is False and System.nics is empty")
    gbps = [min(n.port_gbps, n.switch.share_gbps()) if n.switch.enabled else n.port_gbps for n in nics]
    return min(gbps) * 1e9 / 8 / MIN_WIRE_FRAME / 1e6


def search(evaluate: Callable[[float], Outcome], high: float, *, max_loss: float = DEFAULT_MAX_LOSS,
           resolution: float = DEFAULT_RESOLUTION, progress: Callable[[Probe], None] | None = None,
           max_probes: int = MAX_PROBES) -> SearchResult:
    """The highest offered load (per port) with loss < `max_loss`, to within `resolution` (relative), for a server
    `evaluate(offered) -> Outcome`. `high` is the upper bound (the line rate), probed first."""
    if not 0 < resolution < 1:
        raise ParamError(f"capacity search resolution = {resolution}: must be in (0, 1)")
    if not 0 < max_loss < 1:
        raise ParamError(f"capacity search max_loss = {max_loss}: must be in (0, 1)")
    if not high > 0:
        raise ParamError(f"capacity search upper bound = {high}: must be > 0 M frames/s")
    probes: list[Probe] = []

    def run(rate: float, stage: str) -> Probe:
        if len(probes) >= max_probes:
            raise RuntimeError(f"capacity search: no bracket within {max_probes} probes; loss is not monotonic in "
                               f"the offered load? probes: {[(p.offered_mpps, p.loss) for p in probes]}")
        out = evaluate(rate)
        p = Probe(rate, out.loss, out.answered_mpps, stage, out.stats, out.result)
        probes.append(p)
        if progress:
            progress(p)
        return p

    first = run(high, "saturate")
    if first.sustained(max_loss):
        return SearchResult(first, probes, resolution, max_loss, math.inf)
    # Bracket around the answered rate: lo sustains, hi does not.
    hi = high
    guess = min(max(first.answered_mpps, high * 1e-6), high / (1 + resolution))
    step = 2 * resolution
    p = run(guess, "bracket")
    if p.sustained(max_loss):
        lo = guess
        while True:                # step up until a probe fails (or the next step would reach the failed bound)
            rate = lo * (1 + step)
            if rate >= hi / (1 + resolution):
                break
            p = run(rate, "bracket")
            if not p.sustained(max_loss):
                hi = rate
                break
            lo, step = rate, step * 2
    else:
        hi = guess
        lo = 0.0
        while True:
            rate = hi / (1 + step)
            p = run(rate, "bracket")
            if p.sustained(max_loss):
                lo = rate
                break
            hi, step = rate, step * 2
            if rate < high * 1e-6:
                return SearchResult(None, probes, resolution, max_loss, hi)
    while hi > lo * (1 + resolution):
        rate = math.sqrt(lo * hi)
        if run(rate, "refine").sustained(max_loss):
            lo = rate
        else:
            hi = rate
    best = max((p for p in probes if p.sustained(max_loss)), key=lambda p: p.offered_mpps)
    return SearchResult(best, probes, resolution, max_loss, hi)


def outcome_from_stats(stats: dict[str, float], offered_per_port: float, result: Any = None) -> Outcome:
    """A simulated probe's loss and answered rate (per port, frames) from its statistics."""
    offered_all = stats.get("client.offered_mpps", 0.0)      # all ports, M frames/s
    packets = stats.get("client.packets", 0.0)
    sent_requests = stats.get("client.requests", 0.0) + stats.get("client.lost_requests", 0.0)
    requests_per_frame = sent_requests / packets if packets > 0 else 1.0
    answered_frames_all = stats.get("client.throughput_mrps", 0.0) / requests_per_frame
    # The answered rate reported (the bracket's starting point) is the plain one: requests over the whole span.
    answered_per_port = offered_per_port * min(1.0, answered_frames_all / offered_all) if offered_all > 0 else 0.0
    # For the loss: client.throughput_mrps divides by the time from the first send to the last response, which includes one
    # round trip: in a short run that alone looks like a shortfall of latency / run length (a few percent for a
    # few hundred requests). Take the mean round trip off the span; an overloaded server's backlog still shows,
    # since its last responses wait far longer than
    # the mean. (That correction overstates an overloaded server's rate, so it is not used for the bracket.)
    span, latency = stats.get("client.measured_ns", 0.0), stats.get("client.latency.mean", 0.0)
    if span > latency > 0:
        answered_frames_all *= span / (span - latency)
    answered_fraction = answered_frames_all / offered_all if offered_all > 0 else 0.0
    loss = max(stats.get("client.loss", 0.0), 1.0 - answered_fraction)
    return Outcome(max(0.0, loss), answered_per_port, stats, result)


def simulated_server(make_system: Callable[[float], System], *,
                     simulate_fn: Callable[[System], dict[str, float]] | None = None) -> Callable[[float], Outcome]:
    """A probe function for `search` that simulates: `make_system(rate)` builds the system for one probe (detailed
    mode, client.offered_mpps = rate)."""
    def evaluate(rate: float) -> Outcome:
        system = make_system(rate)
        if system.mode != "detailed":
            raise ParamError("the capacity search needs detailed timing (System.mode = 'detailed'): the NIC is "
                             "timed there")
        if system.client.offered_mpps != rate:
            system.client.offered_mpps = rate
        if simulate_fn is not None:
            return outcome_from_stats(simulate_fn(system), rate)
        from models.sim import simulate
        result = simulate(system)
        return outcome_from_stats(result.stats, rate, result)
    return evaluate


def capacity(make_system: Callable[[float], System], *, max_loss: float = DEFAULT_MAX_LOSS,
             resolution: float = DEFAULT_RESOLUTION, high: float | None = None,
             progress: Callable[[Probe], None] | None = None,
             simulate_fn: Callable[[System], dict[str, float]] | None = None) -> SearchResult:
    """The capacity of a simulated server (see the module doc). `high` defaults to the port's line rate."""
    if high is None:
        high = line_rate_mpps(make_system(1.0))
    return search(simulated_server(make_system, simulate_fn=simulate_fn), high, max_loss=max_loss,
                  resolution=resolution, progress=progress)
