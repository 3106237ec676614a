"""The capacity of a server: the highest open-loop offered load it sustains with less than a given loss (1% by
default, kvs-workload.md), found to a stated relative resolution (1% by default).

A probe runs the server at one offered load per port (`Client.offered_mpps`, M frames/s) and measures its loss: the
larger of `client.loss` (frames the NIC dropped / frames sent) and the shortfall of the answered rate below the
offered one. A short run at a rate the server cannot sustain may end before the RX FIFO overflows, but its backlog,
and so its answered rate, shows it.

The search:
1. Saturate: probe at the upper bound (by default the line rate of the port for the smallest frame). If that
   sustains, the capacity is the line rate (the network, not the server, is the limit) and we stop.
2. Predict: an overloaded server answers at its service rate, so the saturating probe predicts the threshold
   under its loss law (`threshold_of`): DROP, a server that drops what it cannot serve (loss = 1 - C / x), or
   BACKLOG, a short run whose excess waits in the queues and whose loss is the latency-corrected shortfall
   (loss = (x - C) / (x + C)). Under skewed keys the busiest core saturates first: with each core's expected
   share of the load (`load_shares`) the saturating probe's served rate gives a core's rate, and the threshold is
   where the cores past their rate lose enough (`threshold_of`). Probe just below the prediction (half the
   resolution); when it sustains, the probe one resolution above it closes the bracket: three probes for a server
   that follows its law. A search may start from a guess below the upper bound (`search(start=)`); when the guess
   sustains, the upper bound is probed next, so the prediction still comes from one saturated run.
3. Bracket and refine: when a probe lands on the side it was not predicted to, the next prediction uses the
   lowest failed probe, which is nearer capacity and so measures the service rate better (overload can cost a
   server work: a deeply overloaded short run under-states it by a few percent), the secant through the two lowest
   failed probes when they are close, and the loss interpolated between the bracket's ends. When a sustained
   probe lies above the prediction, the search jumps past it by OVERSHOOT (doubling after each miss) to reach a
   failed probe near capacity; after two misses in a row inside a bracket it bisects (geometric midpoint), so it
   ends even where no law holds (a cliff, or a short run's loss that is not monotonic in the load).
The answer is the highest probe that sustained: the true capacity lies in [answer, answer x (1 + resolution)).
4. Or stop at the saturated probe (`search(refine=False)`, options['capacity_search'] = 'saturated'; session 22,
   the studies' default where windows judge the load since session 24, `refine_option`): where steady-state windows
   judge the load anyway (below), the probes' refinement is spent on a short run's verdict that the windows then
   overturn (the 8-core points' probes under-stated their capacity by 20-30%, and the windows took 6-8 loads from
   there). The windows start just above the saturated probe's prediction (`SearchResult.start_mpps`) instead. A
   saturated probe that served nothing predicts nothing: the search then refines as before (`refined` says which).
   Under skew a simulated saturated probe's own cores' rates (each NIC queue's TX frames over the span,
   `core_rates`) predict where the hottest core saturates (`per_core_threshold`; session 24). Statistics without
   those counters are an error naming them (`MissingCounters`); where no core has a rate (a server without
   statistics, more queues than cores, a core that served nothing) the equal-rates law predicts and says so
   (`EqualRatesUnderSkew`); `SearchResult.predicted_by` and the probes' table record which law predicted (session 25).
(For a short probe's server. A probe of 300 requests a core can hide an overload or show start-up loss where a
long run sustains: where the studies measure a steady-state window, the windows judge this answer and move the load
until one confirms it, drivers/window_capacity.py.)

The search does not care what answers a probe: `search` takes any function offered-load -> Outcome (a simulated
server in `simulated_server`, a synthetic model in the tests), so its convergence is tested without simulating.
Starting from the measured answered rate, not from the line rate, is what makes a slow server (an in-order
single-issue core answers a few percent of line rate) come out right instead of quantised to zero.

Probes of a server with a large data set restore it (`capacity(restore=...)`): the first probe checkpoints the
store at the end of its bulk load, and the others restore that checkpoint and warm their caches over
`client.warmup_requests` requests of their own mix instead of loading (and warming over) every item again. A
checkpoint holds the functional state only (memory, harts, devices), none of the caches', TLBs', predictors' or
DRAM's timing state, so a restored run warms. The probes that restore one data set share that warm-up
(drivers/shared_warmup.py): `capacity` runs them through a `SharedWarmup`, so the warm-up runs once and each probe
forks from its end with every statistic a fresh restored run gives (`share_warmup=False` warms each probe itself).
That holds whether `restore` made the checkpoint or `make_system`'s probes restore one of their own (a sweep's
shared checkpoint). `search` with `simulated_server(runner=SharedWarmup())` does the same for a caller that runs
the search itself (the studies' capacity points, which fork their steady-state windows from it too).
"""

from __future__ import annotations

import functools
import math
import pathlib
import shutil
import tempfile
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

from models.params import ParamError
from models.system import System

from . import key_shares

# Smallest frame the wire carries (60 bytes without FCS) plus 24 bytes of preamble, FCS and gap.
MIN_WIRE_FRAME = 84
DEFAULT_MAX_LOSS = 0.01        # kvs-workload.md: throughput = highest sustained rate with < 1% loss per port
DEFAULT_RESOLUTION = 0.01      # relative width of the final bracket (the default)
MAX_PROBES = 40                # a bound so that a server whose loss is not monotonic in load cannot loop forever
# How a probe's loss grows once the offered load x exceeds the rate C its server serves at:
DROP = "drop"          # what the server cannot serve is dropped: loss = 1 - C / x
BACKLOG = "backlog"    # a short run whose excess waits in the queues, its loss the latency-corrected shortfall
#                        (outcome_from_stats): the i-th of N requests waits i (1/C - 1/x) longer, so the run's span
#                        less its mean latency is N (1/C + 1/x) / 2 and loss = (x - C) / (x + C)
# The secant through two failed probes predicts the threshold only where the loss curve between them is near
# straight; across more than this ratio of offered loads it spans the bend at saturation (loss is concave in the
# offered load there: 1 - C / x) and lands far below it. Assumed: 2.
SECANT_SPAN = 2.0
# How far above the saturating probe's prediction the next probe aims (relative). Assumed: 3%, above the 2.1% by
# which the saturating probe of a 1-core 4-issue target (600 requests) under-stated the rate its server served
# near capacity (7.56 against 7.72 M frames/s: a backlog that no longer fits the caches), so that the probe fails
# near capacity and its own served rate predicts the threshold.
OVERSHOOT = 0.03
# Which law a threshold came from (`threshold_law`; SearchResult.predicted_by, the probes' table):
PLAIN_LAW = "plain"                    # even shares (uniform keys, or one core): the loss law alone
PER_CORE_RATES = "per-core rates"      # skewed keys, each core's own served rate (`per_core_threshold`)
EQUAL_RATES = "equal rates"            # skewed keys, the cores taken to serve at one rate (the probe's served rate)


class MissingCounters(KeyError, ValueError):
    """A simulated probe's statistics lack the counters the skewed prediction reads (each NIC queue's tx_frames,
    the client's measured span and offered load): names every missing one. A missing counter is never a zero nor a
    reason to predict by another law unsaid (session 24's fourth read)."""

    def __init__(self, missing: list[str]):
        self.missing = list(missing)
        super().__init__(", ".join(self.missing))

    def __str__(self) -> str:
        return (f"capacity: a deeply overloaded probe under skewed keys predicts from each core's served rate, but "
                f"its statistics lack {', '.join(self.missing)} (a missing counter is never taken as zero; check the "
                "run was detailed with the NIC's queues, and the paths in models/stats_paths.py)")


class EqualRatesUnderSkew(UserWarning):
    """A deeply overloaded probe under skewed keys was read as cores of equal rates, not by each core's own rate:
    the prediction is the equal-rates law's (far below a paced server's threshold, session 24), and says why."""


@dataclass(frozen=True)
class Threshold:
    """A probe's predicted threshold (M frames/s a port), the law that gave it, and, where the cores' own rates
    were wanted (a deeply overloaded probe under skew) but the equal-rates law gave it, why."""
    mpps: float
    law: str
    why: str = ""

    def describe(self) -> str:
        return f"{self.law} ({self.why})" if self.why else self.law


@dataclass
class Outcome:
    """What one probe measured. `answered_mpps` is per port, in offered-load units (frames/s, millions)."""
    loss: float
    answered_mpps: float
    stats: dict[str, float] = field(default_factory=dict, repr=False)
    result: Any = field(default=None, repr=False)    # the simulated run (models.sim.RunResult), when there is one
    law: str = DROP                # how the loss grows with the offered load above capacity (DROP or BACKLOG)
    # Each server core's expected share of the requests offered (`load_shares`, summing to 1); empty for even
    # shares (uniform keys) or one core.
    shares: tuple[float, ...] = ()
    # Each server core's served rate (per port, offered-load units), for a server without statistics (a synthetic
    # one); a simulated probe's are read from its statistics (`core_rates`).
    core_rates: tuple[float, ...] = ()


@dataclass
class Probe:
    offered_mpps: float
    loss: float
    answered_mpps: float
    stage: str                     # 'saturate', 'bracket' or 'refine'
    stats: dict[str, float] = field(default_factory=dict, repr=False)
    result: Any = field(default=None, repr=False)
    law: str = DROP
    shares: tuple[float, ...] = field(default=(), repr=False)
    core_rates: tuple[float, ...] = field(default=(), repr=False)

    def sustained(self, max_loss: float) -> bool:
        return self.loss < max_loss


@dataclass
class SearchResult:
    best: Probe | None             # the highest probe that sustained (None: not even the lowest one)
    probes: list[Probe]
    resolution: float
    max_loss: float
    upper_mpps: float              # the lowest offered load that failed (inf when the line rate sustained)
    warmups: int = 0               # warm-ups of restored probes run: one for all probes that shared it, else one each
    # The threshold the saturated probe predicts (`threshold_of`; NaN: no probe failed). A search with
    # refine=False stops there and leaves the bracket to the steady-state windows (drivers/window_capacity.py).
    predicted_mpps: float = math.nan
    refined: bool = True           # False: the search stopped after its saturated probe (`search(refine=False)`)
    # The law that gave the saturated probe's prediction (`Threshold.describe`: PLAIN_LAW, PER_CORE_RATES or
    # EQUAL_RATES, with why the cores' own rates were not used where they were wanted); "" when no probe failed.
    predicted_by: str = ""

    @property
    def start_mpps(self) -> float:
        """Where the steady-state windows start judging: the search's answer, or after a search that stopped at its
        saturated probe, just above the prediction (half a resolution; session 24), below the saturated probe by a
        resolution, and no lower than a guess that sustained. Above, not below as the refined search's next probe:
        where the server follows its law that window fails within half a resolution of the threshold, and its
        served rate, measured near capacity, predicts the load a resolution below it that sustains and closes the
        bracket (3 runs, as from below); where the saturated probe under-stated the server (overload costs it work,
        OVERSHOOT) the window sustains, and the judge steps past it at once instead of a resolution first (one run
        fewer: 6 against 7 on BacklogServer(8, slowdown 0.05), tests/test_window_capacity.py)."""
        if self.refined or not math.isfinite(self.predicted_mpps):
            return self.offered_mpps
        return max(min(self.predicted_mpps * (1 + self.resolution / 2), self.upper_mpps / (1 + self.resolution)),
                   self.offered_mpps)

    @property
    def offered_mpps(self) -> float:
        """The capacity per port (M frames/s): the highest offered load that sustained."""
        return self.best.offered_mpps if self.best else 0.0

    @property
    def line_limited(self) -> bool:
        return math.isinf(self.upper_mpps)

    def table(self) -> list[dict[str, Any]]:
        """The probes as rows, in the order they ran; a failed probe's row names the law its threshold came from
        (`predicted_by`, as SearchResult.predicted_by; "" for a sustained probe, which predicts nothing)."""
        return [{"probe": i, "stage": p.stage, "offered_mpps": p.offered_mpps, "loss": p.loss,
                 "answered_mpps": p.answered_mpps, "sustained": p.sustained(self.max_loss),
                 "predicted_by": "" if p.sustained(self.max_loss) else
                 threshold_law(p, self.max_loss, quiet=True).describe()}
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
           max_probes: int = MAX_PROBES, start: float | None = None, refine: bool = True) -> SearchResult:
    """The highest offered load (per port) with loss < `max_loss`, to within `resolution` (relative), for a server
    `evaluate(offered) -> Outcome`. `high` is the upper bound (the line rate), probed first; or, with `start` (a
    guess below it), the guess first: when it fails the search goes on below it as from `high`, and when it
    sustains the next probe is `high`, a saturated run whose served rate predicts the threshold (a guess that
    sustains says nothing of how far above it the capacity lies).

    `refine=False` stops after the saturated probe: the result carries its prediction (`predicted_mpps`,
    `start_mpps`) and no bracket (`best` is a guess that sustained, else None). For a caller whose steady-state
    windows judge the load anyway (window_capacity.at_capacity): the short probes' refinement under-stated the
    8-core points by 20-30% (results/speed/README.md, session 18), so the windows moved the load from it by several
    loads; from the saturated run's prediction they start near capacity (session 22)."""
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
        p = Probe(rate, out.loss, out.answered_mpps, stage, out.stats, out.result, out.law, out.shares, out.core_rates)
        probes.append(p)
        if progress:
            progress(p)
        return p

    if start is not None and not 0 < start:
        raise ParamError(f"capacity search start = {start}: must be > 0 M frames/s")
    lo: Probe | None = None        # the highest probe that sustained
    first = run(min(start, high) if start is not None else high, "saturate")
    if first.sustained(max_loss) and first.offered_mpps < high:
        lo, first = first, run(high, "saturate")
    if first.sustained(max_loss):
        return SearchResult(first, probes, resolution, max_loss, math.inf)
    floor = high * 1e-6
    predicted = _predict(None, [first], max_loss)
    predicted_by = threshold_law(first, max_loss, quiet=True).describe()
    if not refine and math.isfinite(predicted) and predicted > floor:
        return SearchResult(lo, probes, resolution, max_loss, first.offered_mpps, predicted_mpps=predicted,
                            refined=False, predicted_by=predicted_by)
    # (A saturated probe that served nothing predicts nothing: the search refines as before, whatever `refine`.)
    fails = [first]                # the probes that failed, lowest offered load first: fails[0] is the bracket's top
    misses = 0                     # predictions in a row that landed on the wrong side
    while lo is None or fails[0].offered_mpps > lo.offered_mpps * (1 + resolution):
        rate = _next_rate(lo, fails, max_loss, resolution, misses, floor)
        expect = rate < _predict(lo, fails, max_loss)     # below the prediction: expected to sustain
        p = run(rate, "bracket" if lo is None else "refine")
        if p.sustained(max_loss):
            misses = 0 if expect else misses + 1
            lo = p if lo is None or p.offered_mpps > lo.offered_mpps else lo
        else:
            misses = misses + 1 if expect else 0
            fails = sorted(fails + [p], key=lambda f: f.offered_mpps)
            if lo is None and rate <= floor:
                return SearchResult(None, probes, resolution, max_loss, fails[0].offered_mpps,
                                    predicted_by=predicted_by)
    return SearchResult(lo, probes, resolution, max_loss, fails[0].offered_mpps, predicted_mpps=predicted,
                        predicted_by=predicted_by)


SEARCHES = ("refined", "saturated")     # options['capacity_search']: the probes' search to the resolution, or
#                                         stopped at its saturated probe (refine=False) for the windows to judge


def _windows_judge(options: dict[str, Any]) -> bool:
    """Whether steady-state windows judge the search's answer (options['steady'], options['confirm'] not False)."""
    return bool(options.get("steady") and options.get("confirm", True))


def search_named(options: dict[str, Any]) -> dict[str, Any]:
    """A point's options as its sweep key names them: with the search `refine_option` takes by default written in
    where that default is not the refined search of sessions 18-23 (where windows judge the load), so a point stored
    before session 24 under {'steady': True} (the refined search) is not taken for one of today's default (the
    saturated search), nor the other way round. Options naming the search, or without windows, are as given (their
    keys as before)."""
    if "capacity_search" in options or not _windows_judge(options):
        return options
    return {**options, "capacity_search": "saturated"}


def refine_option(options: dict[str, Any]) -> bool:
    """`search`'s refine from a point's options: options['capacity_search'] (SEARCHES). By default (session 24)
    'saturated' where steady-state windows judge the load (options['steady'], and options['confirm'] not False):
    the probes stop at the saturated one and the windows start from its prediction; 'refined' elsewhere (the probes
    are the answer), and 'refined' given explicitly is the full probes' search before the windows (sessions 18-23's
    default). 'saturated' given without the windows is a ParamError before any probe."""
    windows = _windows_judge(options)
    kind = options.get("capacity_search", "saturated" if windows else "refined")
    if kind not in SEARCHES:
        raise ParamError(f"capacity_search = {kind!r}: must be one of {', '.join(SEARCHES)}")
    if kind == "saturated" and not windows:
        raise ParamError("capacity_search = 'saturated' stops the probes at the saturated one: it needs the "
                         "steady-state windows to judge the load (options['steady'] and options['confirm'])")
    return kind == "refined"


def threshold_of(p: Probe, max_loss: float) -> float:
    """The offered load at which `p`'s server would reach `max_loss` (`threshold_law`'s, without its law)."""
    return threshold_law(p, max_loss).mpps


def threshold_law(p: Probe, max_loss: float, *, quiet: bool = False) -> Threshold:
    """The offered load at which `p`'s server would reach `max_loss`, if it serves at the rate `p` measured, under
    `p`'s loss law, and which law gave it (`Threshold`). A failed probe near capacity measures that rate well; a
    deeply overloaded one under-states it when overload itself costs the server work (a backlog that no longer fits
    its caches).

    With the cores' shares of the load known and uneven (skewed keys: each core serves its own queue), the busiest
    core saturates first: at offered load x the cores serve S(x) = sum_c min(x s_c, R), R a core's rate. The
    probe's served rate gives R, and the threshold is where S(x) / x reaches the law's served fraction. With even
    shares S(x) = min(x, n R), and this is the plain law.

    A deeply overloaded DROP probe under skew is read by each core's own served rate (`per_core_threshold`): from
    `p.core_rates` (a server without statistics reports them) or else from its statistics (`core_rates`: a
    simulated probe's statistics that lack the counters are a MissingCounters error). Where neither is there (a
    server that reports neither), the NIC has more queues than the server has cores, or a core served nothing, the
    equal-rates law predicts, the result says why, and an EqualRatesUnderSkew warning says so (`quiet`: not)."""
    skewed = len(set(p.shares)) > 1
    if p.law == BACKLOG:           # loss = (x - C) / (x + C)
        served = p.offered_mpps * (1 - p.loss) / (1 + p.loss)
        if not skewed:
            return Threshold(served * (1 + max_loss) / (1 - max_loss), PLAIN_LAW)
        fraction = (1 - max_loss) / (1 + max_loss)
        why = ""
    else:
        # DROP: loss = 1 - C / x. A probe near capacity answered what its loss says it served (the loss takes the
        # short run's one round trip off its span); a deeply overloaded one's backlog makes that correction
        # overstate it: there the plain answered rate.
        served = p.answered_mpps if p.loss > 0.5 else p.offered_mpps * (1 - p.loss)
        fraction = 1 - max_loss
        if not skewed:
            return Threshold(served / fraction, PLAIN_LAW)
        why = ""
        if p.loss > 0.5:
            # Deeply overloaded under skew: the hottest core's rate over its share is where it saturates, and past
            # it the threshold (`per_core_threshold`). Not equal rates: on the reduced 8-core Zipf point the
            # saturated probe's cores served in proportion to their shares (a core's rate over its share 10.0-11.6
            # M frames/s a port, the NIC's FIFO passing frames at the hot queue's pace), which the equal-rate law
            # read as 7.2 where windows sustained 10.8 (session 24, results/speed/README.md). A simulated probe's
            # rates come from its statistics, so a probe replayed from a journal predicts alike.
            rates = p.core_rates or (core_rates(p.stats, p.offered_mpps) if p.stats else ())
            idle = [c for c, r in enumerate(rates) if not r > 0]
            if not p.core_rates and not p.stats:
                why = "the probe reported neither its cores' rates nor statistics"
            elif not rates:
                why = "the probe measured no span or no offered load"
            elif len(rates) != len(p.shares):
                why = f"{len(rates)} NIC queues for {len(p.shares)} cores: a queue's rate is no core's"
            elif idle:
                why = f"core(s) {idle} served nothing in the probe"
            elif any(not s > 0 for s in p.shares):
                why = "a core's expected share is zero"
            else:
                return Threshold(per_core_threshold(p.shares, rates, fraction), PER_CORE_RATES)
            if not quiet:
                warnings.warn(f"capacity: a deeply overloaded probe under skewed keys is read as cores of equal "
                              f"rates: {why} (the equal-rates law under-states a paced server's threshold)",
                              EqualRatesUnderSkew, stacklevel=3)
    # S(x) / x = sum_c min(s_c, R / x): u = R / x at the probe, from its served fraction; then the u at which the
    # served fraction is the law's, and x = R / u.
    u_probe = _share_cap(p.shares, served / p.offered_mpps)
    return Threshold(p.offered_mpps * u_probe / _share_cap(p.shares, fraction), EQUAL_RATES, why)


def per_core_threshold(shares: tuple[float, ...], rates: tuple[float, ...], fraction: float) -> float:
    """The offered load x at which cores with these shares of the load and these service rates (per port) serve
    `fraction` of it, each serving min(x s_c, R_c): the served fraction, sum_c min(s_c, R_c / x), falls as x grows
    past each core's saturation R_c / s_c (the hottest core's first). Between two saturations it is A + B / x (A the
    shares of the cores not saturated, B the rates of those that are), so x = B / (fraction - A) on the piece where
    that lands."""
    order = sorted(range(len(shares)), key=lambda c: rates[c] / shares[c])
    unsaturated, saturated = sum(shares), 0.0
    for k, c in enumerate(order):
        unsaturated -= shares[c]
        saturated += rates[c]
        if fraction > unsaturated:
            x = saturated / (fraction - unsaturated)
            nxt = rates[order[k + 1]] / shares[order[k + 1]] if k + 1 < len(order) else math.inf
            if x <= nxt:
                return x
    return math.inf                # not reached: every core saturated serves sum(rates) / x, below any fraction


def _share_cap(shares: tuple[float, ...], fraction: float) -> float:
    """The u with sum_c min(s_c, u) = `fraction` (shares summing to 1): the per-core cap, relative to the offered
    load, at which the cores together serve that fraction of it."""
    ordered = sorted(shares)
    below = 0.0                    # the shares under the cap, served in full
    for i, s in enumerate(ordered):
        rest = len(ordered) - i    # cores at the cap
        if below + rest * s >= fraction:
            return (fraction - below) / rest
        below += s
    return ordered[-1]             # every core serves its whole share: no loss from the cores


def _predict(lo: Probe | None, fails: list[Probe], max_loss: float) -> float:
    """The offered load at which the loss reaches `max_loss`, predicted from the lowest failed probe's served rate
    under its loss law (`threshold_of`). Two estimates of the loss curve's own shape may place it lower (a server
    whose loss rises smoothly before it saturates): the secant through the two lowest failed probes when they are
    close enough for the curve between them to be near straight, and, with a sustained probe that lost something
    too and lies within SECANT_SPAN below it, the loss interpolated between the bracket's ends (regula falsi)."""
    hi = fails[0]
    bound = min(hi.offered_mpps, threshold_of(hi, max_loss))
    if len(fails) > 1 and fails[1].offered_mpps <= SECANT_SPAN * hi.offered_mpps and fails[1].loss > hi.loss:
        # in the inverse of the offered load, where DROP's loss, 1 - C / x, is a straight line
        nxt = fails[1]
        slope = (nxt.loss - hi.loss) / (1 / nxt.offered_mpps - 1 / hi.offered_mpps)
        bound = min(bound, 1 / (1 / hi.offered_mpps + (max_loss - hi.loss) / slope))
    if lo is not None and 0 < lo.loss < hi.loss and hi.offered_mpps <= SECANT_SPAN * lo.offered_mpps:
        # the loss interpolated between the bracket's ends: only where the curve between them is near straight
        span = hi.offered_mpps - lo.offered_mpps
        bound = min(bound, lo.offered_mpps + span * (max_loss - lo.loss) / (hi.loss - lo.loss))
    return bound


def _next_rate(lo: Probe | None, fails: list[Probe], max_loss: float, resolution: float, misses: int,
               floor: float) -> float:
    """Where to probe next. Before any probe sustained: just below the prediction (half the resolution), so that
    the probe after it, one resolution higher, closes the bracket; after predictions that missed, a geometric step
    (2, 4, 8 ... resolutions) from the failed end. Within a bracket: the probe that closes it on the side the
    prediction is near; in its interior, just below the prediction; once two predictions in a row missed, the
    geometric midpoint (the prediction's law does not hold for this server, e.g. a cliff: bisection bounds the
    probes left by log2 of the bracket's width over the resolution)."""
    hi = fails[0]
    t = _predict(lo, fails, max_loss)
    step = resolution * 2 ** misses
    if lo is None:
        rate = t / (1 + resolution / 2)
        if misses:
            rate = min(rate, hi.offered_mpps / (1 + step))
        return max(min(rate, hi.offered_mpps / (1 + resolution)), floor)
    low, top = lo.offered_mpps * (1 + resolution), hi.offered_mpps / (1 + resolution)
    if low >= top:                 # any probe between closes the bracket
        return math.sqrt(lo.offered_mpps * hi.offered_mpps)
    if t <= lo.offered_mpps:       # a sustained probe above the prediction: it under-states; step up past it,
        # no further than the bracket's geometric midpoint (the law does not hold here: bisection bounds the rest)
        return min(lo.offered_mpps * (1 + max(step, OVERSHOOT * 2 ** misses)),
                   math.sqrt(lo.offered_mpps * hi.offered_mpps))
    elif t <= low:
        rate = lo.offered_mpps * (1 + step)
    elif t >= top:
        rate = hi.offered_mpps / (1 + step)
    elif misses >= 2:
        rate = math.sqrt(lo.offered_mpps * hi.offered_mpps)
    else:
        rate = t / (1 + resolution / 2)
    return min(max(rate, low), top)


def outcome_from_stats(stats: dict[str, float], offered_per_port: float, result: Any = None) -> Outcome:
    """A simulated probe's loss and answered rate (per port, frames) from its statistics."""
    offered_all = stats.get("client.offered_mpps", 0.0)      # all ports, M frames/s
    packets = stats.get("client.packets", 0.0)
    sent_requests = stats.get("client.requests", 0.0) + stats.get("client.lost_requests", 0.0)
    requests_per_frame = sent_requests / packets if packets > 0 else 1.0
    answered_frames_all = stats.get("client.throughput_mrps", 0.0) / requests_per_frame
    # The answered rate reported (the bracket's starting point) is the plain one: requests over the whole span.
    answered_per_port = offered_per_port * min(1.0, answered_frames_all / offered_all) if offered_all > 0 else 0.0
    # For the loss: client.throughput_mrps divides by the time from the first send to the last response, which includes
    # one round trip: in a short run that alone looks like a shortfall of latency / run length (a few percent for a few
    # hundred requests). Take the mean round trip off the span; an overloaded server's backlog still shows, since its
    # last responses wait far longer than the mean. (That correction overstates an overloaded server's rate, so it is
    # not used for the bracket.)
    span, latency = stats.get("client.measured_ns", 0.0), stats.get("client.latency.mean", 0.0)
    if span > latency > 0:
        answered_frames_all *= span / (span - latency)
    answered_fraction = answered_frames_all / offered_all if offered_all > 0 else 0.0
    dropped = stats.get("client.loss", 0.0)
    loss = max(0.0, dropped, 1.0 - answered_fraction)
    # BACKLOG's law when no frame was lost and the excess did queue: the rate it implies, (1 - loss) / (1 + loss) of
    # the offered one, is at least the plain answered rate (requests over a span that holds all the service). A
    # lower one means the excess never waited in the server's queues (a client held back by its window): DROP's.
    queued = offered_per_port * (1 - loss) / (1 + loss) >= answered_per_port
    return Outcome(loss, answered_per_port, stats, result, BACKLOG if dropped <= 0 and queued else DROP)


def core_rates(stats: dict[str, float], offered_per_port: float) -> tuple[float, ...]:
    """Each core's served rate in offered-load units (per port, M frames/s): its NIC queue's TX frames over the
    measured span, over the ports the load was offered on (client.offered_mpps, all ports, over the load per port).
    The queues in global order, hart i's the i-th (models/system.py queue_ports, one queue a hart). Statistics
    without the queues' tx_frames, client.measured_ns or client.offered_mpps are a MissingCounters error naming
    them; a run that measured no span or offered nothing (zero) has no rates: empty."""
    from models import stats_paths as paths

    queues = paths.NIC_QUEUE.instances(stats, "tx_frames")
    missing = [name for name, there in ((paths.NIC_QUEUE.stat("*", "*", "tx_frames"), queues),
                                        ("client.measured_ns", "client.measured_ns" in stats),
                                        ("client.offered_mpps", "client.offered_mpps" in stats)) if not there]
    if missing:
        raise MissingCounters(missing)
    span_s = stats["client.measured_ns"] * 1e-9
    offered_all = stats["client.offered_mpps"]
    if not span_s > 0 or not offered_all > 0 or not offered_per_port > 0:
        return ()
    ports = offered_all / offered_per_port
    return tuple(stats[paths.NIC_QUEUE.stat(*q, "tx_frames")] / span_s / 1e6 / ports for q in queues)


def load_shares(system: System) -> tuple[float, ...]:
    """Each server core's expected share of the requests (drivers/key_shares.expected_core_share:
    Zipf keys hashed to the cores' partitions, CREW's GETs spread evenly); empty for uniform keys (even shares). The
    expectation, not a run's own counts: a short run's counts scatter by sampling alone (300 requests a core: about
    6%), which is no skew its queues would see."""
    c = system.client
    if c.popularity != "zipf" or system.harts < 2:
        return ()
    from models.client import server_mode

    mode = c.mode if c.mode != "auto" else server_mode(system.workload.argv)
    return _expected_shares(c.items, system.harts, mode, c.get_ratio, c.zipf_theta)


@functools.lru_cache(maxsize=8)
def _expected_shares(items: int, cores: int, mode: str, get_ratio: float, theta: float) -> tuple[float, ...]:
    return tuple(float(v) for v in key_shares.expected_core_share(items, cores, mode, get_ratio, theta))


def simulated_server(make_system: Callable[[float], System], *,
                     simulate_fn: Callable[[System], dict[str, float]] | None = None,
                     runner: Callable[[System], Any] | None = None) -> Callable[[float], Outcome]:
    """A probe function for `search` that simulates: `make_system(rate)` builds the system for one probe (detailed
    mode, client.offered_mpps = rate). `runner` replaces models.sim.simulate (system -> RunResult): a
    drivers.shared_warmup.SharedWarmup lets probes that restore one data set share its warm-up."""
    def evaluate(rate: float) -> Outcome:
        system = make_system(rate)
        if system.mode != "detailed":
            raise ParamError("the capacity search needs detailed timing (System.mode = 'detailed'): the NIC is "
                             "timed there")
        if system.client.offered_mpps != rate:
            system.client.offered_mpps = rate
        if simulate_fn is not None:
            out = outcome_from_stats(simulate_fn(system), rate)
        else:
            if runner is None:
                from models.sim import simulate as runner_
            else:
                runner_ = runner
            result = runner_(system)
            out = outcome_from_stats(result.stats, rate, result)
        out.shares = load_shares(system)
        return out
    return evaluate


def capacity(make_system: Callable[[float], System], *, max_loss: float = DEFAULT_MAX_LOSS,
             resolution: float = DEFAULT_RESOLUTION, high: float | None = None,
             progress: Callable[[Probe], None] | None = None,
             simulate_fn: Callable[[System], dict[str, float]] | None = None,
             restore: bool | None = False, checkpoint: str | pathlib.Path | None = None,
             share_warmup: bool = True, runner: Any = None, journal: Any = None,
             refine: bool = True) -> SearchResult:
    """The capacity of a simulated server (see the module doc). `high` defaults to the port's line rate.

    `restore`: the first probe writes a checkpoint at the end of its bulk load and every later probe restores it
    (warming over `client.warmup_requests` requests of its own mix) instead of loading the store again. None
    restores when that is the cheaper way to a warm store: the data set has more items than the warm-up has
    requests. The default is False: restored probes warm over the measured mix, not the whole load, and on a 2^18-item
    4-core server that measured 7% lower (6.80 against 7.31 M req/s), more than the search's resolution, so it is
    opt-in until the two warm-ups agree. `checkpoint` is the folder to write it to (kept); by default a temporary
    one, removed after.

    `share_warmup`: restored probes (of `restore`, or probes `make_system` makes restore a checkpoint) share one
    warm-up (module doc); False warms each one itself. `runner`: a `SharedWarmup` of the caller's to run the probes
    through (kept open after the search, so the caller's own runs at the capacity found can fork from the same
    warm-up; the caller closes it); by default the search opens and closes its own. `simulate_fn` replaces the
    simulation altogether (nothing is shared then). `journal`: a point's journal (drivers/sweep/journal.py): each
    probe is journaled as it finishes, and one a stopped run journaled is replayed, not simulated again.
    `refine`: False stops after the saturated probe, for windows to judge from its prediction (`search`)."""
    probe = make_system(1.0)
    if high is None:
        high = line_rate_mpps(probe)
    if restore is None:
        restore = loads_data_set(probe) and probe.client.items > probe.client.warmup_requests
    elif restore and not loads_data_set(probe):
        raise ParamError("capacity search with restore=True: the probes must load a data set (client.enabled and "
                         "client.bulk_load, no System.restore_from or System.checkpoint_to of their own)")
    if runner is not None and (not share_warmup or simulate_fn is not None):
        raise ParamError("capacity search: a runner is given but share_warmup is False or simulate_fn is given "
                         "(the runner would not run the probes)")
    folder = target = None
    if restore:
        folder = pathlib.Path(checkpoint) if checkpoint else pathlib.Path(tempfile.mkdtemp(prefix="kvsim-capacity-"))
        target = folder / "data-set"
        if target.exists():
            raise ParamError(f"capacity search checkpoint = {str(folder)!r}: it already holds {target.name}/ (a "
                             "checkpoint of another search?); give an empty folder")

    def restoring(rate: float) -> System:
        system = make_system(rate)
        if target is None:
            return system
        if target.exists():
            system.restore_from = str(target)
        else:                      # the first probe loads the store and checkpoints it at the end of the load
            system.checkpoint_to = str(target)
        return system

    from .shared_warmup import SharedWarmup, can_share

    own = None
    if runner is None and share_warmup and simulate_fn is None:
        runner = own = SharedWarmup()
    # Probes that load their store (the first one with `restore`, or all without it) have no warm-up to share;
    # the runner simulates them, and restored runs it cannot share (FS mode, closed loop), as they are.
    counted = runner.warmups if runner is not None else 0
    alone = 0                      # restored probes that warmed by themselves

    def evaluate(rate: float) -> Outcome:
        nonlocal alone
        system = restoring(rate)
        alone += bool(system.restore_from) and (runner is None or not can_share(system))
        return simulated_server(lambda _: system, simulate_fn=simulate_fn, runner=runner)(rate)

    if journal is not None:
        from .sweep.journal import journaled_server

        evaluate = journaled_server(journal, restoring, evaluate, Outcome)
    try:
        res = search(evaluate, high, max_loss=max_loss, resolution=resolution, progress=progress, refine=refine)
        res.warmups = alone + (runner.warmups - counted if runner is not None else 0)
        return res
    finally:
        if own is not None:
            own.close()            # the server holds the checkpoint's files mapped: end it before removing them
        if folder is not None and not checkpoint:
            shutil.rmtree(folder, ignore_errors=True)


def loads_data_set(system: System) -> bool:
    """Does a run of `system` bulk-load the client's store (so that a checkpoint at the end of the load can
    replace the load)?"""
    return system.client.enabled and system.client.bulk_load and not system.restore_from and \
        not system.checkpoint_to
