"""Per-core DVFS and turbo within a power budget (platforms.md §2: "lower the lightly loaded cores to 1.5 GHz,
raise the hottest to 3.5 GHz, and check total power stays in budget"; the EREW-T and CREW-T runs of
validation.md).

The loop: a run (or an interval) measures each core's load; the policy gives every core an operating point; the
next run simulates the resulting per-core clocks (`Core.clock` in `System.cores`, or `Socket.core_models` of each
socket); the power model prices every core at its own clock and at the supply the node's V-f relation gives it
(`power.dvfs`); the total is checked against the budget. It takes any configuration: one socket or several.

**Load measure.** A core's load is the number of measured requests the client sent to its queue
(`client.core{c}.requests`), not its busy fraction. The KVS server polls its RX queue, so every core executes
instructions all the time: cycles, IPC and instructions say how fast a core runs, not how much work it is
offered, and they change with the clock the previous run happened to use. The request count is the load the
client offers to the core's partition (EREW: the partition's share of the key popularity; CREW: the queue's), the
quantity the paper's skew study plots, and it does not depend on the clocks of the measured run. Any other
per-core load vector can be given directly (`assign(system, load)`).

**Policy.** With r = a core's load over the mean core load: r <= `low_below` -> low (1.5 GHz), r >= `turbo_above`
-> turbo (3.5 GHz), otherwise normal (2.5 GHz). `low_below` defaults to low/normal = 0.6: a core at 1.5 GHz has 60%
of the normal clock's capacity, so a core offered at most 60% of the mean load is at most as busy at low as the
mean core is at normal. `turbo_above` = 1.25 (assumed: a core at least 25% busier than the mean is a hot
partition; below that, turbo would mostly be spent on noise in a uniform load). The voltages come from the V-f
relation at the configuration's node; a point outside the node's V-f table is a `ParamError` naming the core, its
clock and the allowed range, before any run.

**Budget.** Each socket's die runtime power (the package's figure, as its TDP is) against `Technology.tdp` or a
given per-socket budget, and optionally the whole server (every socket with its DRAM and NICs, and the
inter-socket links) against a server budget. Before the run, `plan` predicts the power from the measured run's
activity with each core's events per second scaled by its new clock over its old one (a polling core executes
all the time, so its activity follows its clock), and backs turbo off, least loaded turbo core first, until the
prediction fits; what is left over budget is reported, never hidden. After the run, `check_budget` prices the run
itself: that is the verdict.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

import power
from models import stats_paths as paths
from models.core import Core
from models.params import ParamError
from models.system import System
from power import dvfs as vf
from power.tech import technology

LOW, NORMAL, TURBO = "low", "normal", "turbo"
CORE_STAT = re.compile(r"system\.socket(\d+)\.core(\d+)\.")
POINTS = (LOW, NORMAL, TURBO)


@dataclass(frozen=True)
class DvfsPolicy:
    """The operating points (paper: 1.5, 2.5 and 3.5 GHz) and the relative-load thresholds (see the module doc)."""

    low_MHz: float = 1500.0         # paper
    normal_MHz: float = 2500.0      # paper
    turbo_MHz: float = 3500.0       # paper
    low_below: float = 0.6          # = low / normal: a core at low is then no busier than the mean core at normal
    turbo_above: float = 1.25       # assumed: 25% above the mean load marks a hot partition

    def validate(self) -> None:
        if not 0 < self.low_MHz < self.normal_MHz < self.turbo_MHz:
            raise ParamError(f"DvfsPolicy clocks low {self.low_MHz:g} < normal {self.normal_MHz:g} < turbo "
                             f"{self.turbo_MHz:g} MHz: must be increasing and > 0")
        if not 0 <= self.low_below < 1 < self.turbo_above:
            raise ParamError(f"DvfsPolicy.low_below = {self.low_below:g} and turbo_above = {self.turbo_above:g}: "
                             "must satisfy 0 <= low_below < 1 < turbo_above (relative to the mean core load)")

    def MHz(self, point: str) -> float:
        return {LOW: self.low_MHz, NORMAL: self.normal_MHz, TURBO: self.turbo_MHz}[point]


@dataclass
class Assignment:
    """Every core's operating point (cores numbered socket by socket, as harts are)."""

    points: list[str]
    MHz: np.ndarray
    vdd: np.ndarray
    load: np.ndarray
    backed_off: list[int] = field(default_factory=list)   # cores moved from turbo to normal to fit the budget

    @property
    def relative_load(self) -> np.ndarray:
        mean = float(np.mean(self.load)) if len(self.load) else 0.0
        return self.load / mean if mean > 0 else np.ones_like(self.load)

    def counts(self) -> dict[str, int]:
        return {p: self.points.count(p) for p in POINTS}

    def table(self) -> pd.DataFrame:
        return pd.DataFrame({"core": range(len(self.points)), "load": self.load,
                             "relative_load": self.relative_load, "point": self.points, "MHz": self.MHz,
                             "vdd": self.vdd})


# ---- load and choice ------------------------------------------------------------------------------------------

def load_from_stats(stats: dict, cores: int) -> np.ndarray:
    """Each core's load: the measured requests the client sent to its queue (`client.core{c}.requests`)."""
    names = [paths.CLIENT_CORE.stat(c, "requests") for c in range(cores)]
    missing = [name for name in names if name not in stats]
    if missing:
        raise ValueError(f"the run's stats lack the client's per-core load ({', '.join(missing[:3])}"
                         f"{' ...' if len(missing) > 3 else ''}): the DVFS policy needs a run with the ghost client")
    return np.array([float(stats[name]) for name in names])


def choose(load, policy: DvfsPolicy = DvfsPolicy()) -> list[str]:
    """The policy's point for each core from its load (any non-negative numbers, one per core)."""
    policy.validate()
    load = np.asarray(load, dtype=float)
    if load.ndim != 1 or len(load) == 0 or np.any(~np.isfinite(load)) or np.any(load < 0):
        raise ValueError(f"load must be one finite, non-negative number per core, not {load!r}")
    mean = float(load.mean())
    rel = load / mean if mean > 0 else np.ones_like(load)
    return [LOW if r <= policy.low_below else TURBO if r >= policy.turbo_above else NORMAL for r in rel]


@dataclass(frozen=True)
class PaperPolicy:
    """The paper's experiment (platforms.md §2; issue 28 item 5): on each socket, the `coldest` least loaded cores
    to the low point (1.5 GHz) and the `hottest` most loaded to turbo (3.5 GHz), the rest at normal (2.5 GHz),
    whatever the loads' values; the study then compares total processor power with every core at normal. Among equal
    loads a lower core number counts as colder (a uniform load still moves 20 + 6 cores: the rank is all it uses)."""

    coldest: int = 20               # paper: the 20 coldest cores of a socket
    hottest: int = 6                # paper: the 6 hottest
    low_MHz: float = 1500.0         # paper
    normal_MHz: float = 2500.0      # paper
    turbo_MHz: float = 3500.0       # paper

    def MHz(self, point: str) -> float:
        return {LOW: self.low_MHz, NORMAL: self.normal_MHz, TURBO: self.turbo_MHz}[point]


def choose_ranked(load, sockets: list[int], policy: PaperPolicy = PaperPolicy()) -> list[str]:
    """The paper's point for each core: per socket (`sockets` = its core counts, in hart order) the `coldest`
    lowest loads low and the `hottest` highest turbo. A socket with fewer than coldest + hottest cores is refused."""
    load = np.asarray(load, dtype=float)
    if load.ndim != 1 or len(load) != sum(sockets) or np.any(~np.isfinite(load)) or np.any(load < 0):
        raise ValueError(f"load must be one finite, non-negative number per core ({sum(sockets)}), not {load!r}")
    if policy.coldest < 0 or policy.hottest < 0:
        raise ParamError(f"PaperPolicy coldest = {policy.coldest}, hottest = {policy.hottest}: must be >= 0")
    points = [NORMAL] * len(load)
    start = 0
    for k, n in enumerate(sockets):
        if policy.coldest + policy.hottest > n:
            raise ParamError(f"socket {k} has {n} cores: the paper's policy moves {policy.coldest} coldest + "
                             f"{policy.hottest} hottest cores; give a socket of at least {policy.coldest + policy.hottest}")
        order = sorted(range(start, start + n), key=lambda c: (load[c], c))   # coldest first, ties by core number
        for c in order[:policy.coldest]:
            points[c] = LOW
        for c in order[n - policy.hottest:]:
            points[c] = TURBO
        start += n
    return points


def assign_paper(system: System, load, policy: PaperPolicy = PaperPolicy()) -> Assignment:
    """The paper's operating points for every core of `system` from `load` (one number per core), with each point's
    voltage from the node's V-f relation (a point outside its table is a `ParamError`)."""
    points = choose_ranked(load, [s.cores for s in system.socket_list()], policy)
    return _assignment(system, points, np.asarray(load, dtype=float), policy.MHz)


def _assignment(system: System, points: list[str], load: np.ndarray, mhz_of) -> Assignment:
    tech = _technology(system)
    lo, hi = vf.clock_range_MHz(tech)
    curve = vf.vf_curve(tech)
    for i, p in enumerate(points):
        mhz = mhz_of(p)
        if not (lo * (1 - 1e-9) <= mhz <= hi * (1 + 1e-9)):
            raise ParamError(f"core {i}: DVFS point {p} = {mhz:.0f} MHz is outside the V-f table of the "
                             f"{tech.node_nm:g} nm {tech.device} node: allowed {lo:.0f} to {hi:.0f} MHz")
    volts = {p: curve.voltage(mhz_of(p)) for p in set(points)}
    return Assignment(points=points, MHz=np.array([mhz_of(p) for p in points]),
                      vdd=np.array([volts[p] for p in points]), load=load)


# ---- the configuration's cores and its V-f table --------------------------------------------------------------

def _technology(system: System):
    t = system.technology
    if t.vdd:
        raise ParamError(f"System.technology.vdd = {t.vdd} fixes one supply for every core: per-core DVFS needs "
                         "per-core supplies from the V-f relation (set vdd = 0)")
    return technology(t.node, t.device, t.temperature)


def core_slots(system: System) -> list[tuple[str, Core]]:
    """(parameter path, Core) of every core, numbered socket by socket as harts are."""
    if not system.sockets:
        if system.cores:
            return [(f"System.cores[{i}]", c) for i, c in enumerate(system.cores)]
        return [(f"System.core (core {i})", system.core) for i in range(system.harts)]
    out = []
    for k, s in enumerate(system.sockets):
        if s.core_models:
            out += [(f"System.sockets[{k}].core_models[{i}]", c) for i, c in enumerate(s.core_models)]
        else:
            out += [(f"System.sockets[{k}].core (core {i})", s.core) for i in range(s.cores)]
    return out


def check_clocks(system: System) -> None:
    """Every core's clock within the V-f table of the configuration's node, else a `ParamError` naming the core,
    its clock and the allowed range (before any run)."""
    tech = _technology(system)
    lo, hi = vf.clock_range_MHz(tech)
    for n, (path, core) in enumerate(core_slots(system)):
        mhz = core.clock / 1e6
        if not (lo * (1 - 1e-9) <= mhz <= hi * (1 + 1e-9)):
            raise ParamError(f"core {n} ({path}.clock) = {mhz:.0f} MHz is outside the V-f table of the "
                             f"{tech.node_nm:g} nm {tech.device} node: allowed {lo:.0f} to {hi:.0f} MHz")


def assign(system: System, load, policy: DvfsPolicy = DvfsPolicy()) -> Assignment:
    """The policy's operating point for every core of `system` from `load` (one number per core), with the
    voltage of each point at the configuration's node; a point outside the V-f table is a `ParamError`."""
    n = len(core_slots(system))
    load = np.asarray(load, dtype=float)
    if load.shape != (n,):
        raise ValueError(f"load has {load.size} entries but the system has {n} cores: give one per core")
    return _assignment(system, choose(load, policy), load, policy.MHz)


def _at_clock(core: Core, mhz: float) -> Core:
    """A copy of `core` (its parameter objects too, e.g. its MMU) at `mhz`."""
    out = copy.deepcopy(core)
    out.clock = int(round(mhz * 1e6))
    return out


def apply(system: System, assignment: Assignment) -> System:
    """A copy of `system` whose cores run at the assignment's clocks (per-core `Core` models, same parameters
    otherwise); checked against the V-f table."""
    slots = core_slots(system)
    if len(assignment.points) != len(slots):
        raise ValueError(f"the assignment covers {len(assignment.points)} cores but the system has {len(slots)}")
    out = copy.deepcopy(system)
    models = [_at_clock(core, mhz) for (_, core), mhz in zip(slots, assignment.MHz, strict=True)]
    if not out.sockets:
        out.cores = models
    else:
        start = 0
        for s in out.sockets:
            s.core_models = models[start:start + s.cores]
            start += s.cores
    out.validate()
    check_clocks(out)
    return out


def at_clock(system: System, MHz: float) -> System:
    """A copy of `system` with every core at one clock (the baseline of a study)."""
    n = len(core_slots(system))
    tech = _technology(system)
    return apply(system, Assignment([NORMAL] * n, np.full(n, float(MHz)),
                                    np.full(n, vf.vf_curve(tech).voltage(MHz)), np.zeros(n)))


# ---- power and the budget ---------------------------------------------------------------------------------------

@dataclass
class BudgetCheck:
    """Each socket's die runtime power against its budget, and optionally the server's total."""

    sockets: list[vf.TdpVerdict]
    server: vf.TdpVerdict | None = None

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.sockets) and (self.server is None or self.server.ok)

    def __str__(self) -> str:
        lines = [f"socket {k}: {v}" for k, v in enumerate(self.sockets)]
        if self.server is not None:
            lines.append(f"server (sockets, DRAM, NICs, links): {self.server}")
        return ("WITHIN budget" if self.ok else "OVER budget") + "\n  " + "\n  ".join(lines)


def socket_results(priced) -> list:
    """The per-socket `Result`s of a priced run (one socket: the result itself)."""
    return list(priced.sockets) if isinstance(priced, power.report.SystemResult) else [priced]


def check_budget(priced, config: dict, budget_W: float | None = None,
                 server_budget_W: float | None = None) -> BudgetCheck:
    """Budget verdicts of a priced run: each socket's die runtime power against `budget_W` (default: the
    configuration's `Technology.tdp`, an error when that is 0), and the server's total against `server_budget_W`
    when given."""
    budget = budget_W if budget_W is not None else float(config["technology"]["tdp"])
    if not budget > 0:
        raise ParamError("System.technology.tdp = 0 and no budget_W given: name the power budget per socket")
    verdicts = [vf.tdp_check(r, budget, "runtime") for r in socket_results(priced)]
    server = None
    if server_budget_W is not None:
        total = float(priced.system.runtime_power_W if isinstance(priced, power.report.SystemResult)
                      else priced.socket.runtime_power_W)
        server = vf.TdpVerdict(ok=total <= server_budget_W, power_W=total, budget_W=float(server_budget_W),
                               margin_W=float(server_budget_W) - total, metric="runtime (server)")
    return BudgetCheck(verdicts, server)


def predict(prev_stats: dict, prev_system: System, new_system: System):
    """The power of `new_system` predicted from a measured run of `prev_system`: the measured activity with each
    core's counters scaled by its new clock over its old one (a polling core's events follow its clock)."""
    old = [c.clock for _, c in core_slots(prev_system)]
    new = [c.clock for _, c in core_slots(new_system)]
    first = np.cumsum([0] + [s.cores for s in prev_system.socket_list()])     # hart number of each socket's core 0
    stats = dict(prev_stats)
    for key, value in prev_stats.items():       # one pass over the stats, whatever the core count
        m = CORE_STAT.match(key)
        if m:
            n = int(first[int(m[1])]) + int(m[2])
            stats[key] = value * new[n] / old[n]
    return power.price_run(stats, new_system.to_dict())


@dataclass
class Plan:
    system: System               # the configuration to run next
    assignment: Assignment
    predicted: object            # priced prediction (Result or SystemResult)
    budget: BudgetCheck          # of the prediction


def plan(system: System, prev_stats: dict, policy: DvfsPolicy = DvfsPolicy(), *, budget_W: float | None = None,
         server_budget_W: float | None = None, load=None) -> Plan:
    """The next run's configuration from a measured run of `system` (its stats): the policy's points, then turbo
    backed off (least loaded turbo core first) while the predicted power exceeds the budget."""
    cores = len(core_slots(system))
    load = load_from_stats(prev_stats, cores) if load is None else np.asarray(load, dtype=float)
    a = assign(system, load, policy)
    curve = vf.vf_curve(_technology(system))
    while True:
        nxt = apply(system, a)
        predicted = predict(prev_stats, system, nxt)
        verdict = check_budget(predicted, nxt.to_dict(), budget_W, server_budget_W)
        turbo = [i for i, p in enumerate(a.points) if p == TURBO]
        if verdict.ok or not turbo:
            return Plan(nxt, a, predicted, verdict)
        coolest = min(turbo, key=lambda i: (a.load[i], i))
        a.points[coolest] = NORMAL
        a.MHz[coolest] = policy.normal_MHz
        a.vdd[coolest] = curve.voltage(policy.normal_MHz)
        a.backed_off.append(coolest)


# ---- a whole study: the same load at one clock everywhere, then under the policy -------------------------------

def summary(stats: dict, priced, budget: BudgetCheck) -> dict[str, float]:
    totals = priced.system if isinstance(priced, power.report.SystemResult) else priced.socket
    return {"throughput_mrps": float(stats.get("client.throughput_mrps", 0.0)),
            "p95_us": float(stats.get("client.latency.p95", 0.0)) / 1e3,
            "loss": float(stats.get("client.loss", 0.0)),
            "die_power_W": float(priced.runtime_power_W), "total_power_W": float(totals.runtime_power_W),
            "within_budget": float(budget.ok)}


def study(system: System, policy: DvfsPolicy = DvfsPolicy(), *, budget_W: float | None = None,
          server_budget_W: float | None = None, run=None, report=print, paper: PaperPolicy | None = None):
    """Run `system` with every core at the policy's normal clock, plan the per-core points from its load, run the
    planned configuration, and price and budget-check both. `run(system, label)` simulates one configuration and
    returns its stats (default: one simulation; a capacity search can stand in). With `paper`, the paper's
    experiment too (row 'paper': its coldest cores low and hottest turbo on each socket, from the same load, no
    back-off: the paper compares the power). Returns (table, plan, {label: stats}); the table has one row per
    configuration: throughput, p95, loss, die and total power, whether it is within budget, and its core counts
    per operating point."""
    if run is None:
        from models.sim import simulate

        def run(s: System, label: str) -> dict:
            return dict(simulate(s).stats)

    base = at_clock(system, policy.normal_MHz)
    rows, runs = {}, {}
    report(f"baseline: every core at {policy.normal_MHz:.0f} MHz")
    runs["baseline"] = run(base, "baseline")
    priced = power.price_run(runs["baseline"], base.to_dict())
    check = check_budget(priced, base.to_dict(), budget_W, server_budget_W)
    rows["baseline"] = summary(runs["baseline"], priced, check)
    report(f"baseline: {check}")
    p = plan(base, runs["baseline"], policy, budget_W=budget_W, server_budget_W=server_budget_W)
    report(f"DVFS plan: {p.assignment.counts()}, turbo backed off on {len(p.assignment.backed_off)} core(s); "
           f"predicted {p.budget}")
    runs["dvfs"] = run(p.system, "dvfs")
    priced2 = power.price_run(runs["dvfs"], p.system.to_dict())
    check2 = check_budget(priced2, p.system.to_dict(), budget_W, server_budget_W)
    rows["dvfs"] = summary(runs["dvfs"], priced2, check2)
    report(f"DVFS run: {check2}")
    counts = {"baseline": {NORMAL: len(p.assignment.points)}, "dvfs": p.assignment.counts()}
    if paper is not None:
        a = assign_paper(base, load_from_stats(runs["baseline"], len(core_slots(base))), paper)
        configured = apply(base, a)
        report(f"the paper's experiment: {a.counts()}")
        runs["paper"] = run(configured, "paper")
        priced3 = power.price_run(runs["paper"], configured.to_dict())
        check3 = check_budget(priced3, configured.to_dict(), budget_W, server_budget_W)
        rows["paper"] = summary(runs["paper"], priced3, check3)
        counts["paper"] = a.counts()
        report(f"the paper's run: {check3}")
    table = pd.DataFrame(rows).T
    for label in rows:
        for k in POINTS:
            table.loc[label, f"cores_{k}"] = float(counts[label].get(k, 0))
    return table, p, runs
