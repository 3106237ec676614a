"""End-to-end study 3: throughput and p95 latency of the dual- and quad-socket billion-RPS servers for Uniform and
Skewed (Zipf 0.99) keys x 95% and 50% GET, in EREW and CREW, and with per-core DVFS + turbo on the skewed
workloads (EREW-T, CREW-T) (validation.md). Throughput is each point's capacity: the highest open-loop offered load
per port with < 1% loss (drivers/capacity.py), in requests/s, with the p95 round trip at that load.

EREW-T and CREW-T: before the search, one detailed run of the same point at the nominal 2.5 GHz gives each core's
load (`client.core{c}.requests`) and activity; the DVFS policy (`drivers/dvfs.py`) plans every core's operating
point from it within the power budget; the search then runs with those clocks (`plan_dvfs`). The paper applies them
to the skewed workloads only; so do we. Every point's best probe is priced by the power model (all sockets) and
checked against the per-socket budget.

Under skewed keys the measured requests are divided by the hottest core's expected load (`windowed`), so the
busiest core sees about as many requests as under uniform keys and the simulated window stays short.

At the paper's conditions (issue 28): the data set loaded once per steering mode and restored by every probe, both
GET ratios, and at each capacity a steady-state window (drivers/steady_state.py) whose throughput and p95 carry 95%
intervals; at skewed or CREW points, where the client's random stream decides which core is hot or where each GET
goes, the window is repeated for SEEDS seeds (client.measure_seed) and the seeds' mean and t-interval reported.
Before that, windows judge the load the short probes found and move it until a window at it sustains and one a
resolution above fails (drivers/window_capacity.py; options['confirm'] = False turns it off): the capacity is then
the window's, and the table says whether a window confirmed it, in how many loads and windows; the plot hatches the
bars of points no window confirmed or whose window lost more than the bound.

Reduced (the older default of `make figures`): short measured windows and a coarse search (see REDUCED and FULL); the
report and the CSV say which was used. Full-scale quad-socket searches take hours on a small host."""

from __future__ import annotations

import importlib.util
import pathlib
from dataclasses import dataclass
from typing import Any, Callable

import pandas as pd

from analysis import style
from models import stats_paths as paths

from ..shared_warmup import SharedWarmup
from ..sweep import Base, Grid, Sweep, capacity_key_options
from . import common, servers


@dataclass(frozen=True)
class Scale:
    name: str
    requests_per_core: int   # measured requests per core per probe
    items: int               # tiny items in the data set
    resolution: float        # the capacity search's relative resolution
    max_probes: int          # probes at most (the best sustained probe so far is the answer when it is reached)


# Reduced: 300 measured requests per core is about 90 us of simulated time at a socket's ~200 M requests/s, longer
# than the p95 round trip, so a backlog still shows as loss; 5% resolution needs 4-8 probes. 2^16 items: the
# caches are warmed over the whole bulk load (the servers' LLCs, 45 MB per socket, hold the whole data set; warming
# only the end of a larger load would leave it cold), as the other target runs do (target_load, make bench).
REDUCED = Scale("reduced", requests_per_core=300, items=1 << 16, resolution=0.05, max_probes=8)
# Full: ~1 ms of simulated time per probe at the quad-socket server's load, 1% resolution, 2^20 items (42 MB of
# log: more than one socket's LLC, less than four).
FULL = Scale("full", requests_per_core=4000, items=1 << 20, resolution=0.01, max_probes=20)
# Capacity per port of the one-socket target (60 cores, Uniform, 95% GET, EREW) found by the reduced search
# (scaling study, sweep e2e-1s-reduced); the searches of the multi-socket servers start from it (`start_mpps`).
ONE_SOCKET_MPPS = 62.6

SERVERS = (4, 2)           # the quad-socket server first: the headline figure
WORKLOADS = {"uniform": ("uniform", "Uniform"), "zipf": ("zipf", "Skewed (Zipf 0.99)")}
GET_RATIOS = (0.95, 0.5)
MODES = ("erew", "crew")
EVALUATOR = "drivers.studies.end_to_end:evaluate"
# Seeds of the steady-state window at a skewed or CREW point's capacity (assumed: 3, the fewest that give a
# t-interval over the seeds with a finite width worth plotting, t(0.975, 2) = 4.3; each seed is a whole window).
SEEDS = 3


def dvfs_available() -> bool:
    return importlib.util.find_spec("drivers.dvfs") is not None


def _base(sockets: int, scale: Scale, cores: int = 0, warm: bool = False) -> Base:
    if not warm:
        return Base("drivers.studies.servers:server", sockets=sockets, items=scale.items,
                    requests_per_core=scale.requests_per_core, cores=cores)
    return Base("drivers.studies.servers:server", sockets=sockets, items=scale.items,
                requests_per_core=scale.requests_per_core, cores=cores,
                warmup_requests=common.WARMUP_REQUESTS_PER_CORE * (cores or servers.CORES_PER_SOCKET * sockets))


def _options(scale: Scale, sockets: int, dvfs: bool = False) -> dict[str, Any]:
    out = {"resolution": scale.resolution, "max_probes": scale.max_probes, "scale": scale.name, "dvfs": dvfs}
    if sockets > 1:
        out["start_from"] = ONE_SOCKET_MPPS     # each socket has its own NICs: start at one socket's capacity
    return out


def server_sweeps(sockets: int, scale: Scale, cores: int = 0, name: str = "",
                  conditions: common.Conditions | None = None) -> list[Sweep]:
    """The e2e sweeps of one server: every workload x GET ratio x mode, and (when the DVFS policy exists) the skewed
    workloads again with DVFS + turbo. With `conditions` (the paper's, issue 28): the data set loaded once per
    steering mode (the mode is in the checkpoint's identity) and restored by every probe, a steady-state window at
    each capacity, and unless conditions.all_points the 95% GET points only (the paper's headline workloads)."""
    name = name or f"e2e-{sockets}s" + ("" if scale is FULL else f"-{scale.name}")
    ties = {"client.mode": ("workload.argv[mode]",)}
    paper = conditions is not None
    # Both GET ratios carry the study's conclusion (issue 28's acceptance: 95% and 50% GET, with p95 for each).
    gets = list(GET_RATIOS)
    # Repeated seeds where the client's randomness matters (skewed keys, CREW): the evaluator applies them there.
    steady = {"steady": True, "seeds": SEEDS} if paper else {}
    out = [Sweep(name, _base(sockets, scale, cores, warm=paper),
                 Grid({"client.popularity": list(WORKLOADS), "client.get_ratio": gets,
                       "client.mode": list(MODES)}), ties=ties, evaluator=EVALUATOR,
                 options={**_options(scale, sockets), **steady}, share_checkpoint=paper)]
    if dvfs_available():
        out.append(Sweep(f"{name}-T", _base(sockets, scale, cores, warm=paper),
                         Grid({"client.popularity": ["zipf"], "client.get_ratio": gets,
                               "client.mode": list(MODES)}), ties=ties, evaluator=EVALUATOR,
                         options={**_options(scale, sockets, dvfs=True), **steady}, share_checkpoint=paper))
    return out


def scale_of(c: common.Conditions) -> Scale:
    """The measurement of the conditions: the older reduced and full ones for the studies' own data sets; at the
    paper's, short probes (the steady-state window measures the capacity found) to the studies' 2% resolution."""
    if c.items is None:
        return FULL if c.full else REDUCED
    return Scale(f"paper-{c.tag()}", requests_per_core=REDUCED.requests_per_core, items=c.items,
                 resolution=common.CAPACITY_RESOLUTION, max_probes=12)


def sweeps(full: bool | None = None, conditions: common.Conditions | None = None) -> list[Sweep]:
    c = common.conditions_for(full, conditions)
    scale = scale_of(c)
    paper = c if c.items is not None else None
    return [sw for s in SERVERS if servers.available(s)
            for sw in server_sweeps(s, scale, name=f"e2e-{s}s-{c.tag()}" if paper else "", conditions=paper)]


# ---- the evaluator: a capacity search with a probe budget, and the DVFS hook -----------------------------------

class _Budget(Exception):
    pass


def sustained_mrps(stats: dict[str, float]) -> float:
    """The request rate a probe sustained (M requests/s): offered requests less its loss as the capacity search
    measures it. The answered rate over a short window (client.throughput_mrps, first send to last response) is
    biased low by the round trip in its span: at 300 requests per core a 60-core socket answers 141 M requests/s
    over the span while sustaining 200 M offered with no loss."""
    from .. import capacity

    offered = stats.get("client.offered_mpps", 0.0)
    if not offered:
        return float("nan")
    ports = max(1, len(paths.NIC_PORT.instances(stats, "rx_frames")))
    loss = capacity.outcome_from_stats(stats, offered / ports).loss
    sent = stats.get("client.requests", 0.0) + stats.get("client.lost_requests", 0.0)
    per_frame = sent / stats["client.packets"] if stats.get("client.packets") else 1.0
    return offered * per_frame * (1.0 - loss)


def hottest_load(system) -> float:
    """The hottest core's expected share of the requests over the mean core's (1 for uniform keys), for this point's
    key popularity, steering and GET ratio (partition_load.expected_core_share, through capacity.load_shares, which
    keeps it for the search's prediction: at 192 Mi items it takes about 20 s to compute)."""
    from .. import capacity

    shares = capacity.load_shares(system)
    return float(max(shares) * len(shares)) if shares else 1.0


def windowed(make_system: Callable[[], Any]) -> Callable[[], Any]:
    """The point's factory with the measured requests divided by the hottest core's expected load (skewed keys): the
    busiest core then gets about as many requests as a core does under uniform keys, and the measured phase lasts
    about as long in simulated time. (With all the requests, a skewed point's capacity is a few percent of the
    uniform one, so the same requests would take that many times longer to send, while every other core polls:
    a 240-core EREW probe under Zipf 0.99 would simulate ~20 times the instructions.)"""
    hot = hottest_load(make_system())

    def make():
        s = make_system()
        if hot > 1.0:
            s.client.requests = max(s.harts, int(round(s.client.requests / hot)))
        return s
    return make


def start_mpps(system, start_from: float) -> float:
    """Where a search starts (offered M frames/s per port): `start_from` (a uniform-load capacity per port, e.g.
    the one-socket target's) over the hottest core's expected load relative to the mean for this point's key
    popularity, steering and GET ratio (partition_load.expected_core_share; 1 for uniform keys), plus 5%. Under
    skew the hottest core saturates first, so the capacity falls about as that load rises; starting near it saves
    the probes a search from line rate spends finding the bracket."""
    return start_from / hottest_load(system) * 1.05


def plan_dvfs(make_system: Callable[[], Any], report: Callable[[str], None], journal: Any = None):
    """EREW-T / CREW-T: one detailed run of the point at the nominal clocks, offered line rate (the most activity,
    so the power prediction errs high), gives each core's load (`client.core{c}.requests`) and activity; the DVFS
    policy (drivers/dvfs.py: lightly loaded cores to 1.5 GHz, the hottest to 3.5 GHz, turbo backed off until the
    predicted power fits the budget) plans every core's clock from it. Returns (plan, stats describing it)."""
    from drivers import dvfs
    from models.sim import simulate

    from .. import capacity

    base = make_system()
    base.client.offered_mpps = capacity.line_rate_mpps(base)
    measured = simulate(base).stats if journal is None else journal.stats("dvfs planning run",
                                                                          lambda: simulate(base).stats)
    plan = dvfs.plan(base, measured)
    counts = plan.assignment.counts()
    report(f"DVFS plan: {counts}, turbo backed off on {len(plan.assignment.backed_off)} core(s)")
    return plan, {"dvfs.cores_low": float(counts[dvfs.LOW]), "dvfs.cores_normal": float(counts[dvfs.NORMAL]),
                  "dvfs.cores_turbo": float(counts[dvfs.TURBO]),
                  "dvfs.turbo_backed_off": float(len(plan.assignment.backed_off)),
                  "dvfs.predicted_within_budget": float(plan.budget.ok)}


def price(stats: dict[str, float], system) -> tuple[dict[str, float], str | None]:
    """The power of a run (power.price_run, every socket) and the per-socket budget check (drivers/dvfs.py), as
    stats; (stats, None), or ({}, the error) when the run cannot be priced (the capacity found stays valid)."""
    try:
        import power
        from drivers import dvfs

        priced = power.price_run(stats, system.to_dict())
        check = dvfs.check_budget(priced, system.to_dict())
        totals = priced.system if isinstance(priced, power.report.SystemResult) else priced.socket
        return {"e2e.die_power_w": float(priced.runtime_power_W), "e2e.total_power_w": float(totals.runtime_power_W),
                "e2e.within_budget": float(check.ok)}, None
    except Exception as err:  # pricing is a by-product: its failure must not lose the search's result
        return {}, f"{type(err).__name__}: {err}"


def seeds_for(system, options: dict[str, Any]) -> int:
    """Seeds of the point's steady-state window: options['seeds'] where the client's randomness matters (skewed
    keys: which keys are hot where; CREW: where each GET goes), else 1 (uniform EREW: every core sees the same
    stream's statistics)."""
    from models.client import server_mode

    c = system.client
    mode = c.mode if c.mode != "auto" else server_mode(system.workload.argv)
    random = c.popularity == "zipf" or mode == "crew"
    return int(options.get("seeds", 1)) if random else 1


def evaluate(make_system: Callable[[], Any], options: dict[str, Any],
             report: Callable[[str], None], journal: Any = None) -> dict[str, Any]:
    """The capacity search on the point (as drivers.sweep.evaluate_capacity) with at most options['max_probes']
    probes (the best sustained one is the answer when the budget runs out: `capacity.budget_hit` = 1), and with
    options['dvfs'] the DVFS + turbo operating points set first. `journal`: the point's (drivers/sweep/journal.py):
    the DVFS planning run, the probes and the windows are journaled and replayed on a re-run of a stopped point."""
    from .. import capacity

    capacity.refine_option(options)      # options['capacity_search'], checked before any run
    make_system = windowed(make_system)
    extra: dict[str, float] = {}
    plan = None
    if options.get("dvfs"):
        plan, extra = plan_dvfs(make_system, report, journal)

    def make(rate: float):
        s = make_system()
        if plan is not None:
            from drivers import dvfs

            s = dvfs.apply(s, plan.assignment)
        s.client.offered_mpps = rate
        return s

    # Probes that restore the point's data set share its warm-up, and so do the steady-state windows at the capacity
    # found (every statistic as a fresh run's; module doc of drivers/shared_warmup.py); options['shared_warmup'] =
    # False warms each run itself.
    shared = SharedWarmup() if options.get("shared_warmup", True) else None
    try:
        out = _search_and_window(make, make_system, shared, extra, options, report, journal)
        if journal is not None:
            out["stats"]["capacity.replayed_units"] = float(journal.replayed)
        return out
    finally:
        if shared is not None:
            shared.close()


def _search_and_window(make: Callable[[float], Any], make_system: Callable[[], Any], shared: SharedWarmup | None,
                       extra: dict[str, float], options: dict[str, Any],
                       report: Callable[[str], None], journal: Any = None) -> dict[str, Any]:
    """evaluate's capacity search and steady-state window, their runs through `shared` (when given), journaled in
    `journal` (when given)."""
    from .. import capacity

    probes: list[capacity.Probe] = []
    max_probes = int(options.get("max_probes", capacity.MAX_PROBES))
    from ..sweep.journal import journaled_server

    sim = journaled_server(journal, make, capacity.simulated_server(make, runner=shared),
                           capacity.Outcome)

    def budgeted(rate: float) -> capacity.Outcome:
        if len(probes) >= max_probes:
            raise _Budget()
        return sim(rate)

    def progress(p) -> None:
        probes.append(p)
        report(f"probe {len(probes)} at {p.offered_mpps:.3f} M frames/s per port: loss {100 * p.loss:.2f}%")

    max_loss = options.get("max_loss", capacity.DEFAULT_MAX_LOSS)
    resolution = options.get("resolution", capacity.DEFAULT_RESOLUTION)
    line = capacity.line_rate_mpps(make(1.0))
    # From a guess below line rate, when there is one: a guess that sustains is followed by a saturated run at line
    # rate, whose served rate predicts the threshold (capacity.search's `start`; the busiest core's share of the
    # load goes into that prediction under skew).
    start = start_mpps(make_system(), options["start_from"]) if options.get("start_from") else None
    budget_hit = 0.0
    # Where windows judge the load the probes stop at the saturated one by default (session 24; options
    # ['capacity_search'] = 'refined' searches to the resolution first): the windows start from its prediction.
    refine = capacity.refine_option(options)
    stopped = None                 # the search that stopped at its saturated probe (its prediction), if it did
    try:
        res = capacity.search(budgeted, line, max_loss=max_loss, resolution=resolution, progress=progress,
                              start=start, refine=refine)
        ok = [p for p in probes if p.sustained(max_loss)]
        best = max(ok, key=lambda p: p.offered_mpps) if ok else None
        upper = res.upper_mpps
        stopped = res if not res.refined else None
    except _Budget:
        budget_hit = 1.0
        ok = [p for p in probes if p.sustained(max_loss)]
        best = max(ok, key=lambda p: p.offered_mpps) if ok else None
        failed = [p.offered_mpps for p in probes if not p.sustained(max_loss)]
        upper = min(failed) if failed else float("inf")
    stats = dict(best.stats if best else {})
    run_stats = best.stats if best else {}      # the run at the capacity, alone (priced)
    out: dict[str, Any] = {}
    window_upper = None
    if options.get("steady") and (best is not None or stopped is not None):
        # The windows judge the search's answer (or the saturated probe's prediction) and move the load until one
        # confirms it (drivers/window_capacity.py; options['confirm'] = False: the rule at the search's answer only).
        # The point's statistics are then the confirming window's, and the capacity is its load.
        from ..window_capacity import at_capacity

        found = stopped or capacity.SearchResult(best, probes, resolution, max_loss, upper)
        got = at_capacity(make, found, seeds_for(make_system(), options), options, report, runner=shared,
                          journal=journal)
        stats, run_stats = got.pop("stats"), got.pop("run_stats")
        out.update(got)
        window_upper = stats["capacity.upper_mpps_per_port"]
    answered = best is not None or window_upper is not None     # a load some run sustained
    stats.update(extra)
    rate = stats.get("capacity.mpps_per_port", best.offered_mpps if best else 0.0)
    power_error = None
    if answered and options.get("power", True):
        priced, power_error = price(run_stats, make(rate))
        stats.update(priced)
    if answered:
        stats["e2e.sustained_mrps"] = sustained_mrps(run_stats)
    stats.update({"capacity.mpps_per_port": rate,
                  "capacity.upper_mpps_per_port": window_upper if window_upper is not None else
                  upper if upper != float("inf") else -1.0,
                  "capacity.probes": float(len(probes)), "capacity.budget_hit": budget_hit,
                  "capacity.mrps": stats.get("client.throughput_mrps", 0.0)})
    table = [{"probe": i, "stage": p.stage, "offered_mpps": p.offered_mpps, "loss": p.loss,
              "answered_mpps": p.answered_mpps, "sustained": p.sustained(max_loss)} for i, p in enumerate(probes)]
    out.update(stats=stats, probes=table)
    if power_error:
        out["power_error"] = power_error
    return out


evaluate.restores = True     # every probe runs the point's own configuration: it can restore a shared data set
evaluate.journals = True     # run_point gives it the point's journal
evaluate.key_options = capacity_key_options   # the key names the capacity search run


# ---- figures ----------------------------------------------------------------------------------------------------

def label(mode: str, dvfs: bool) -> str:
    return mode.upper() + ("-T" if dvfs else "")


def frame(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per point: server, workload, GET ratio, mode label, throughput and p95 at capacity."""
    rows = []
    for name, table in tables.items():
        for _, row in table[table.status == "ok"].iterrows():
            f = common.figures_of(row)
            r = {k[5:]: v for k, v in row.items() if isinstance(k, str) and k.startswith("stat.")}
            harts = int(row.get("cfg.harts", 0))
            rows.append({
                "sockets": max(1, round(harts / servers.CORES_PER_SOCKET)), "cores": harts,
                "workload": WORKLOADS[row["param.client.popularity"]][1],
                "get_ratio": float(row["param.client.get_ratio"]),
                "mode": label(row["param.client.mode"], name.endswith("-T")),
                # With the steady-state window: its throughput, 95% interval and p95; else the search's probe.
                "throughput_mrps": f["throughput_mrps"] if "steady.throughput" in r else sustained_mrps(r),
                "throughput_ci_mrps": f["throughput_ci_mrps"], "answered_mrps": f["throughput_mrps"],
                "p95_us": f["p95_steady_us"] if "steady.throughput" in r else f["p95_us"],
                "p95_ci_us": f["p95_steady_ci_us"], "seeds": f["seeds"], "p50_us": f["p50_us"],
                "p95_under_100us": bool(f["p95_us"] < 100.0),
                "offered_mpps_per_port": r.get("capacity.mpps_per_port", float("nan")),
                "loss": r.get("client.loss", float("nan")), "probes": r.get("capacity.probes", float("nan")),
                # The steady window's own loss at the capacity the short probes found, and whether it stayed within
                # the search's bound and met the window's stopping rule (nan: no window).
                "window_loss": r.get("steady.loss", float("nan")),
                "window_sustained": r.get("steady.sustained", float("nan")),
                # How many of the seeds' windows at the capacity sustained (each seed's loss: steady.seed<k>.loss).
                "seeds_sustained": r.get("steady.seeds_sustained", float("nan")),
                "window_converged": r.get("steady.converged", float("nan")),
                # Whether windows confirmed the capacity (drivers/window_capacity.py: a window at it sustains, one a
                # resolution above fails), the loads they judged and the windows simulated (nan: no windows).
                "confirmed": r.get("capacity.confirmed", float("nan")),
                "window_loads": r.get("capacity.window_loads", float("nan")),
                "windows": r.get("capacity.windows", float("nan")),
                "search_offered_mpps_per_port": r.get("capacity.search_mpps_per_port", float("nan")),
                "budget_hit": bool(r.get("capacity.budget_hit", 0.0)),
                "total_power_w": r.get("e2e.total_power_w", float("nan")),
                "die_power_w": r.get("e2e.die_power_w", float("nan")),
                "within_budget": r.get("e2e.within_budget", float("nan")),
                "cores_turbo": r.get("dvfs.cores_turbo", float("nan")), "cores_low": r.get("dvfs.cores_low", float("nan")),
                "measured_requests": r.get("client.requests", float("nan")), "host_seconds": row["host_seconds"],
                "sweep": name})
    cols = ["sockets", "workload", "get_ratio", "mode"]
    return pd.DataFrame(rows).sort_values(cols).reset_index(drop=True) if rows else pd.DataFrame(rows)


# The mark of a bar whose capacity no steady-state window confirmed, or whose window lost more than the bound.
UNCONFIRMED = "hatched: capacity not confirmed by a steady-state window, or its window lost > 1%"
HATCH = "///"


def unconfirmed(m: pd.DataFrame) -> bool:
    """Is the (one-row) point's capacity one no window confirmed (confirmed = 0) or whose window lost more than the
    bound (window_sustained = 0)? Points without windows (nan) are not marked."""
    return bool(len(m)) and any(col in m and m[col].iloc[0] == 0.0 for col in ("confirmed", "window_sustained"))


def plot(df: pd.DataFrame, path: pathlib.Path, caption: str = "") -> None:
    """The paper's layout: per server, groups of bars (one group per workload x GET ratio, one bar per mode) of
    throughput, and the same bars of p95 latency below with the 100 us bound. A bar whose capacity no window
    confirmed is hatched (UNCONFIRMED)."""
    from matplotlib.patches import Rectangle

    plt = style.pyplot()
    import numpy as np

    socket_counts = sorted(df.sockets.unique())
    modes = [m for m in ("EREW", "CREW", "EREW-T", "CREW-T") if m in set(df["mode"])]
    groups = [(w, g) for w in [v[1] for v in WORKLOADS.values()] for g in GET_RATIOS]
    fig, axes = plt.subplots(2, len(socket_counts), figsize=(6.5 * len(socket_counts), 7), squeeze=False)
    width = 0.8 / max(1, len(modes))
    for col, sockets in enumerate(socket_counts):
        d = df[df.sockets == sockets]
        x = np.arange(len(groups))
        for i, mode in enumerate(modes):
            tp, ci, p95, p95_ci, marked = [], [], [], [], []
            for w, g in groups:
                m = d[(d.workload == w) & (d.get_ratio == g) & (d["mode"] == mode)]
                marked.append(unconfirmed(m))
                tp.append(m.throughput_mrps.iloc[0] / 1e3 if len(m) else np.nan)
                ci.append(m.throughput_ci_mrps.iloc[0] / 1e3 if len(m) else np.nan)
                p95.append(m.p95_us.iloc[0] if len(m) else np.nan)
                p95_ci.append(m.p95_ci_us.iloc[0] if len(m) and "p95_ci_us" in m else np.nan)
            at = x + (i - (len(modes) - 1) / 2) * width
            bars = [axes[0, col].bar(at, tp, width, label=mode)]
            style.interval(axes[0, col], at, tp, np.array(tp) + np.array(ci), np.array(tp) - np.array(ci),
                           label=style.STEADY_INTERVAL if i == 0 else None)
            bars.append(axes[1, col].bar(at, p95, width, label=mode))
            for drawn in bars:
                for bar, mark in zip(drawn.patches, marked):
                    if mark:
                        bar.set_hatch(HATCH)
                        bar.set_edgecolor("0.15")
            style.interval(axes[1, col], at, p95, np.array(p95) + np.array(p95_ci), np.array(p95) - np.array(p95_ci),
                           label=style.P95_INTERVAL if i == 0 else None)
        names = [f"{w.split(' ')[0]}\n{int(g * 100)}% GET" for w, g in groups]
        for row in (0, 1):
            axes[row, col].set_xticks(x, names)
            axes[row, col].grid(axis="y", alpha=0.3)
        axes[0, col].set_title(f"{sockets}-socket server ({sockets * servers.CORES_PER_SOCKET} cores)")
        style.rate_axis(axes[0, col], "throughput (billion requests/s)")
        style.throughput_references(axes[0, col], scale=1e-3)
        style.rate_axis(axes[1, col], "p95 round trip (us)")
        style.reference(axes[1, col], 100.0, "100 us bound")
    if any(unconfirmed(df.iloc[[i]]) for i in range(len(df))):
        # The legend's entry for the mark (an empty patch: it draws nothing)
        axes[0, -1].add_patch(Rectangle((0, 0), 0, 0, fill=False, hatch=HATCH, edgecolor="0.15", label=UNCONFIRMED))
    style.legend_outside(axes[0, -1])
    style.legend_outside(axes[1, -1])
    style.save(fig, path, caption)


def _named(rows: pd.DataFrame, detail: Callable[[Any], str] = lambda r: "") -> str:
    """The points of `rows` by name (server, workload, GET ratio, mode), each with its `detail`."""
    return "; ".join(f"{r.sockets}s {r.workload} {int(r.get_ratio * 100)}% {r['mode']}{detail(r)}"
                     for _, r in rows.iterrows())


def make(tables, outdir: pathlib.Path, full: bool | None = None,
         conditions: common.Conditions | None = None) -> list[pathlib.Path]:
    c = common.conditions_for(full, conditions)
    scale = scale_of(c)
    df = frame(tables)
    if not df.empty:
        df["conditions"] = c.text(scale.items if c.items is not None else None)
    csv, png = outdir / "end_to_end.csv", outdir / "end_to_end.png"
    df.to_csv(csv, index=False)
    paths = [csv]
    notes = [f"scale: {scale.name} ({scale.requests_per_core} measured requests per core per probe, {scale.items:,} "
             f"items, {scale.resolution:.0%} search resolution, at most {scale.max_probes} probes)"]
    if not df.empty:
        plot(df, png, style.conditions(
            full=None, items=scale.items, window=f"{scale.name} scale: {scale.requests_per_core:,} measured requests "
            f"per core per probe, capacity to {scale.resolution:.0%}, whole servers", extra=df["conditions"].iloc[0]))
        paths.append(png)
        over = df[~df.p95_under_100us]
        if len(over):
            notes.append("p95 at or above 100 us: " + _named(over, lambda r: f" {r.p95_us:.1f} us"))
        unsustained = df[df.window_sustained == 0.0]
        if len(unsustained):
            notes.append("steady window lost more than the search's bound at the capacity reported (the probes' "
                         "when no window confirmed one; the throughput is then the answered rate of an overloaded "
                         "server): " + _named(unsustained, lambda r: f" window loss {100 * r.window_loss:.2f}%"
                                + (f", {r.seeds_sustained:.0f} of {r.seeds:.0f} seeds sustained"
                                   if pd.notna(r.get("seeds_sustained")) else "")))
        unconverged = df[df.window_converged == 0.0]
        if len(unconverged):
            notes.append("steady window did not meet its stopping rule in the windows allowed (the last is "
                         "reported; drivers/steady_state.py): " + _named(unconverged))
        unconfirmed = df[df.confirmed == 0.0] if "confirmed" in df else df.iloc[0:0]
        if len(unconfirmed):
            notes.append("capacity not confirmed by a steady-state window (drivers/window_capacity.py: no window "
                         "sustained with one a resolution above failing within the window budget, or confirmation "
                         "off; hatched in the plot): " + _named(unconfirmed, lambda r: f" ({r.windows:.0f} windows)"))
        if df.budget_hit.any():
            notes.append(f"{int(df.budget_hit.sum())} point(s) reached the probe budget: their capacity is the best "
                         "sustained probe, the bracket is wider than the resolution")
    if not dvfs_available():
        notes.append("EREW-T / CREW-T not run: the DVFS policy (drivers/dvfs.py) is not in this checkout")
    cols = ["sockets", "workload", "get_ratio", "mode", "throughput_mrps", "throughput_ci_mrps", "p95_us",
            "p95_ci_us", "seeds", "offered_mpps_per_port", "loss", "window_loss", "window_sustained",
            "seeds_sustained", "window_converged", "confirmed", "window_loads", "windows", "search_offered_mpps_per_port", "probes",
            "budget_hit", "total_power_w",
            "within_budget", "cores_low", "cores_turbo", "host_seconds"]
    cols = [col for col in cols if col in df]
    report = common.write_report(
        outdir / "end_to_end.md", "End-to-end throughput of the dual- and quad-socket servers",
        __doc__.split("\n\n")[0].replace("\n", " "),
        [f"servers: {', '.join(f'configs/{servers.SERVER_CONFIGS[s]}.py' for s in SERVERS)}",
         "client.popularity = uniform, zipf (0.99); client.get_ratio = 0.95, 0.5; client.mode and the server's "
         "mode= = erew, crew", notes[0]],
        common.markdown_table(df[cols]) if not df.empty else "(no points)", [png.name] if not df.empty else [],
        notes[1:], metrics=["steady.throughput", "steady.p95_ns"] if c.items is not None else None)
    return paths + [report]
