"""The dense servers' studies (issue 17; platforms.md section 3), each a sweep of capacity searches on one simulated
stack, aggregated into its 1.5U server (models.dense_server):

- cores: Mercury-n and Iridium-n for n = 1, 2, 4, 8, 16, 32 cores per stack, with A7-class (1 GHz) and A15-class
  (1.5 GHz) cores: throughput, TPS/W and TPS/GB per stack and per server;
- memory: the 32-core Mercury stacks with the 3D DRAM's closed-page latency swept 10-100 ns, with and without the
  private 2 MB L2;
- KeyVault-n (n = 2, 4, 8, 16; A15 1.5 GHz with L2) against Mercury per stack and per 1.5U;
- the server table (Mercury-32 A7 and A15, Iridium-32, KeyVault-16 at 1.5U), read from the points above;
- the network bound: every point's 10 GbE port utilisation (offered frames x (frame + 24 B of preamble, FCS and gap)
  over the line rate), and one what-if point (Mercury-32 A15 with a 10 ns PCIe link latency) that shows what caps
  the A15 stacks below the line rate.

Every stack is built by its platform's config (`configs.mercury`, `configs.iridium`, `configs.keyvault`): what a
config changes (its NIC, its memory ports) reaches the studies through it. Each point is one capacity search
(drivers.capacity: the highest offered load with < 1% loss, to the scale's resolution), priced by the power model
(cores and caches of the best probe) plus the integrated MAC (drivers.studies.dense.MAC_POWER_W); memory power per
GB/s, PHYs, switches, the port limit and the power budget are the server's (models.dense_server).

Scales: `REDUCED` (`make figures`) and `FULL` (`--full`) differ in measured requests per core and resolution;
`SMOKE` is the test's.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import pathlib
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import configs
from analysis import style
from drivers import capacity as cap
from drivers.sweep import Base, Grid, List, Sweep
from models import stats_paths as paths
from models.dense_server import ServerBudgetWarning, StackFigures
from models.system import System

from . import common, dense

CORE_COUNTS = (1, 2, 4, 8, 16, 32)
KEYVAULT_CORES = (2, 4, 8, 16)
MEMORY_CORES = 32             # the memory study runs on the server table's stacks (or a smaller scale's largest)
DRAM_LATENCIES = ("10ns", "25ns", "50ns", "100ns")
# Core kinds: (core_kind, clock) as the configs take them, and the label the tables use.
CORE_KINDS = {"a7": ("a7", None, "A7 1 GHz"), "a15": ("a15", "1.5GHz", "A15 1.5 GHz")}
PLATFORMS = ("mercury", "iridium", "keyvault")
EVALUATOR = "drivers.studies.dense_sweeps:evaluate"
IRIDIUM_STALL_ROUNDS = 5_000_000
WIRE_OVERHEAD = 24            # bytes per frame on the wire beyond the frame: preamble 8, FCS 4, gap 12
# A stack whose port is this busy at its capacity is port-bound: the reduced search's answer lies within its 5%
# resolution below the true capacity, so a stack at its line rate can come out as low as 1 / 1.05 = 0.952 of it.
PORT_BOUND = 0.95
# The what-if of the network-bound diagnosis: the PCIe NIC's one-way link latency cut to this.
WHAT_IF_PCIE_LATENCY = "10ns"


@dataclass(frozen=True)
class Scale:
    name: str
    requests_per_core: int          # measured requests per core per probe
    min_requests: int               # at least this many in all (small stacks would measure too short a window)
    resolution: float               # relative width of the capacity bracket
    max_probes: int
    items: int = dense.ITEMS
    core_counts: tuple[int, ...] = CORE_COUNTS
    keyvault_cores: tuple[int, ...] = KEYVAULT_CORES
    latencies: tuple[str, ...] = DRAM_LATENCIES
    platforms: tuple[str, ...] = PLATFORMS
    kinds: tuple[str, ...] = ("a7", "a15")
    what_if: bool = True

    def requests(self, cores: int) -> int:
        return max(cores * self.requests_per_core, self.min_requests)


# Reduced: 300 measured requests per core (at least 1,200 per probe): about 1 ms of simulated time at a 32-core
# stack's capacity; 5% resolution takes 4-7 probes. 32 Ki items (each instance holds its share without evicting).
REDUCED = Scale("reduced", requests_per_core=300, min_requests=1200, resolution=0.05, max_probes=12)
FULL = Scale("full", requests_per_core=2000, min_requests=8000, resolution=0.01, max_probes=24)
# At the paper's conditions (the default since issue 28): the FULL measurement of the points that carry the
# conclusion: the server table's stacks (Mercury-32, Iridium-32, KeyVault-16) and their neighbours on the cores axis
# (16; KeyVault 8), the memory study's whole latency x L2 grid on the 32-core Mercury stacks, and the what-if.
KEY = dataclasses.replace(FULL, name="full-key", core_counts=(16, 32), keyvault_cores=(8, 16))
# The test's: two small Mercury stacks and one KeyVault stack, a coarse search.
SMOKE = Scale("smoke", requests_per_core=60, min_requests=120, resolution=0.25, max_probes=8, items=1 << 12,
              core_counts=(1, 2), keyvault_cores=(2,), latencies=("10ns", "50ns"), platforms=("mercury", "keyvault"),
              kinds=("a7",), what_if=False)


def stack(platform: str, cores: int, core_kind: str = "a15", clock: str | None = None, l2: bool = False,
          requests: int = 1200, items: int = dense.ITEMS, store_mem: str = dense.STORE_MEM) -> System:
    """One stack of `platform` as its config builds it, running the memcached-class client (dense.GET_RATIO), detailed
    from the measured phase (the bulk load fast-forwards with cache warming). The sweeps' base."""
    if platform not in PLATFORMS:
        raise ValueError(f"platform {platform!r}: must be one of {', '.join(PLATFORMS)}")
    module = configs.load(platform)
    client = {"items": items, "requests": requests, "get_ratio": dense.GET_RATIO}
    if platform == "keyvault":
        system = module.system(cores=cores, store_mem=store_mem, **client)
    elif platform == "iridium":
        system = module.system(cores=cores, core_kind=core_kind, clock=clock, store_mem=store_mem, **client)
        # Its cores wait on 20 us flash reads (NIC rings included): an overloaded stack still answering can go the
        # client's default 100,000 scheduling rounds without a response (measured: Iridium-2 A15 at 0.0046 M
        # frames/s stopped as "no response"; with this it answered every request).
        system.client.stall_rounds = IRIDIUM_STALL_ROUNDS
    else:
        system = module.system(cores=cores, core_kind=core_kind, clock=clock, l2=l2, store_mem=store_mem, **client)
    system.detailed_start = "roi"
    system.warm_caches = True
    return system


def _base(scale: Scale, platform: str, cores: int, kind: str = "a15", **kw: Any) -> Base:
    core_kind, clock, _ = CORE_KINDS[kind]
    args: dict[str, Any] = {"platform": platform, "cores": cores, "requests": scale.requests(cores),
                            "items": scale.items}
    if platform != "keyvault":
        args.update(core_kind=core_kind, clock=clock)
    args.update(kw)
    return Base("drivers.studies.dense_sweeps:stack", **args)


def _options(scale: Scale, platform: str) -> dict[str, Any]:
    return {"resolution": scale.resolution, "max_probes": scale.max_probes, "scale": scale.name,
            "platform": platform}


def sweep_name(platform: str, kind: str, cores: int, scale: Scale, what: str = "") -> str:
    tag = "" if scale.name == "reduced" else f"-{scale.name}"
    return f"dense-{platform}-{kind}-n{cores}{what}{tag}"


def scale_for(c: common.Conditions) -> Scale:
    """The measurement of conditions `c`: reduced, REDUCED; the paper's, FULL over the key points (KEY) or, with
    all_points, every point. Every stack is whole either way, and keeps its own data set (dense.ITEMS, sized for the
    stacks' memory; the billion-RPS paper's 192 Mi items are not the dense servers' workload)."""
    return REDUCED if c.reduced else FULL if c.all_points else KEY


def sweeps(full: bool | None = None, conditions: common.Conditions | None = None,
           scale: Scale | None = None) -> list[Sweep]:
    """The studies' sweeps, one per stack configuration (platform, core kind, cores: what the configs take as
    arguments); the memory study's grid (latency x L2) is the space of the MEMORY_CORES Mercury sweeps."""
    scale = scale or scale_for(common.conditions_for(full, conditions))
    out: list[Sweep] = []
    no_l2 = List([{"caches.l2_enabled": False}])
    memory_cores = min(MEMORY_CORES, max(scale.core_counts))
    for kind in scale.kinds:
        if "mercury" in scale.platforms:
            for n in scale.core_counts:
                space = no_l2 if n != memory_cores else \
                    Grid({"memory.dram3d.access_latency": list(scale.latencies), "caches.l2_enabled": [False, True]})
                out.append(Sweep(sweep_name("mercury", kind, n, scale), _base(scale, "mercury", n, kind), space,
                                 evaluator=EVALUATOR, options=_options(scale, "mercury")))
        if "iridium" in scale.platforms:
            for n in scale.core_counts:
                out.append(Sweep(sweep_name("iridium", kind, n, scale), _base(scale, "iridium", n, kind),
                                 List([{"memory.flash.read_latency": "20us"}]), evaluator=EVALUATOR,
                                 options=_options(scale, "iridium")))
    if "keyvault" in scale.platforms:
        for n in scale.keyvault_cores:
            out.append(Sweep(sweep_name("keyvault", "a15", n, scale), _base(scale, "keyvault", n),
                             List([{"caches.l2_enabled": True}]), evaluator=EVALUATOR,
                             options=_options(scale, "keyvault")))
    if scale.what_if and "mercury" in scale.platforms:
        n = max(scale.core_counts)
        out.append(Sweep(sweep_name("mercury", "a15", n, scale, "-pcie"), _base(scale, "mercury", n, "a15"),
                         List([{"nic.pcie_latency": WHAT_IF_PCIE_LATENCY}]), evaluator=EVALUATOR,
                         options={**_options(scale, "mercury"), "what_if": True}))
    return out


# ---- the evaluator: a capacity search, priced ---------------------------------------------------------------

def _priced(system: System) -> dict[str, float]:
    import power
    from models.sim import simulate

    stats = dict(simulate(system).stats)
    stats.update(power.price_run(stats, system.to_dict()).stats())
    return stats


def port_figures(stats: dict[str, float], offered_mpps: float, port_gbps: float) -> dict[str, float]:
    """The 10 GbE port at the capacity: mean request and response frame (bytes, without FCS), the line rate in
    frames/s for that request frame, and the offered load's share of it (the port's RX utilisation)."""
    port = functools.partial(paths.NIC_PORT.stat, 0, 0)
    rx_frames, tx_frames = stats.get(port("rx_frames"), 0.0), stats.get(port("tx_frames"), 0.0)
    rx_bytes = stats.get(port("rx_bytes"), 0.0) / rx_frames if rx_frames else math.nan
    tx_bytes = stats.get(port("tx_bytes"), 0.0) / tx_frames if tx_frames else math.nan
    line = port_gbps * 1e9 / 8 / (rx_bytes + WIRE_OVERHEAD) / 1e6 if rx_frames else math.nan
    return {"port.rx_frame_bytes": rx_bytes, "port.tx_frame_bytes": tx_bytes, "port.line_rate_mfps": line,
            "port.rx_utilisation": offered_mpps / line if rx_frames else math.nan,
            "port.tx_utilisation": offered_mpps * (tx_bytes + WIRE_OVERHEAD) * 8 / (port_gbps * 1e3)
            if tx_frames else math.nan}


def evaluate(make_system: Callable[[], System], options: dict[str, Any],
             report: Callable[[str], None]) -> dict[str, Any]:
    """One point: the stack's capacity (drivers.capacity), the best probe's statistics priced by the power model,
    plus capacity.*, port.* (port_figures) and dense.* (the stack's figures for the server: logic power, memory
    GB/s, capacity in bytes)."""
    def make(rate: float) -> System:
        system = make_system()
        system.client.offered_mpps = rate
        return system

    def progress(p: cap.Probe) -> None:
        report(f"probe at {p.offered_mpps:.4f} M frames/s: loss {100 * p.loss:.2f}%")

    probe_system = make(1.0)
    res = cap.search(cap.simulated_server(make, simulate_fn=_priced), cap.line_rate_mpps(probe_system),
                     resolution=options["resolution"], progress=progress, max_probes=options["max_probes"])
    if res.best is None:
        raise RuntimeError(f"no offered load down to {res.upper_mpps:.3g} M frames/s was sustained")
    stats = dict(res.best.stats)
    stats.update({"capacity.mpps_per_port": res.offered_mpps, "capacity.upper_mpps_per_port":
                  res.upper_mpps if not res.line_limited else -1.0, "capacity.probes": float(len(res.probes)),
                  "capacity.mrps": stats.get("client.throughput_mrps", 0.0)})
    stats.update(port_figures(stats, res.offered_mpps, probe_system.active_nics()[0].port_gbps))
    platform = configs.load(options["platform"])
    stats["dense.logic_power_w"] = (stats["power.cores.runtime_power_W"] + stats["power.caches.runtime_power_W"]
                                    + dense.MAC_POWER_W)
    stats["dense.memory_gbps"] = dense.memory_gbps(stats)
    stats["dense.capacity_bytes"] = float(platform.stack(probe_system.harts).capacity())
    return {"stats": stats, "probes": res.table()}


evaluate.restores = False     # each probe loads its own data set (small: 32 Ki items)


# ---- tables -------------------------------------------------------------------------------------------------

def _platform_of(name: str) -> str:
    return name.split("-")[1]


def _kind_label(platform: str, row: Any) -> str:
    if platform == "keyvault":
        return CORE_KINDS["a15"][2]
    model = row.get("cfg.core.model")
    return CORE_KINDS["a7" if model == "inorder" else "a15"][2]


def busiest_port_share(stats: dict[str, float]) -> float:
    """The busiest memory port's (or flash controller's) share of all accesses of the measured phase."""
    ports = {p for counter in ("reads", "writes") for _, p in paths.STACK_PORT.instances(stats, counter, socket=0)}
    per_port = [sum(stats.get(paths.STACK_PORT.stat(0, p, counter), 0.0) for counter in ("reads", "writes"))
                for p in ports]
    total = sum(per_port)
    return max(per_port) / total if total else math.nan


def frame(tables: dict[str, Any]) -> Any:
    """One row per point: the stack's figures at its capacity and its 1.5U server's (as many stacks as the ports,
    the board and the power budget allow)."""
    import pandas as pd

    rows = []
    for name, table in tables.items():
        if table.empty or "status" not in table:
            continue
        for _, row in table[table.status == "ok"].iterrows():
            st = {k[5:]: v for k, v in row.items() if isinstance(k, str) and k.startswith("stat.") and v == v}
            if "dense.logic_power_w" not in st:
                continue
            platform = _platform_of(name)
            memory = "flash" if platform == "iridium" else "dram3d"
            figures = StackFigures(requests_per_s=st["capacity.mrps"] * 1e6, logic_power_w=st["dense.logic_power_w"],
                                   memory_gbps=st["dense.memory_gbps"], capacity_bytes=int(st["dense.capacity_bytes"]),
                                   memory=memory)
            server = configs.load(platform).server()
            stacks, limit = server.fill(figures)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ServerBudgetWarning)   # fill() keeps it within the budget
                srv = server.evaluate(figures, stacks=max(1, stacks))
            gb = figures.capacity_bytes / (1 << 30)
            latency = row.get("cfg.memory.flash.read_latency") if platform == "iridium" else \
                row.get("cfg.memory.dram3d.access_latency")
            rows.append({
                "sweep": name, "platform": platform, "core": _kind_label(platform, row),
                "cores": int(row["cfg.harts"]), "l2": bool(row.get("cfg.caches.l2_enabled")),
                "memory latency ns": float(latency) / 1e3 if latency == latency and latency is not None else math.nan,
                "what_if": bool(str(name).endswith("-pcie") or "-pcie-" in str(name)),
                "stack M req/s": figures.requests_per_s / 1e6, "p95 us": st.get("client.latency.p95", math.nan) / 1e3,
                "stack logic W": figures.logic_power_w, "stack mem GB/s": figures.memory_gbps,
                "stack W": srv.stack_power_w, "stack req/s per W": figures.requests_per_s / srv.stack_power_w,
                "stack req/s per GB": figures.requests_per_s / gb, "stack GB": gb,
                "stacks per 1.5U": stacks, "server W": srv.power_w if stacks else 0.0,
                "server M req/s": srv.requests_per_s / 1e6 if stacks else 0.0,
                "server req/s per W": srv.requests_per_s_per_w if stacks else 0.0,
                "server req/s per GB": srv.requests_per_s_per_gb if stacks else 0.0,
                "GB per server": srv.capacity_gb if stacks else 0.0,
                "limited by": limit,
                "offered Mfps": st["capacity.mpps_per_port"], "line limited": st["capacity.upper_mpps_per_port"] < 0,
                "request frame B": st.get("port.rx_frame_bytes", math.nan),
                "response frame B": st.get("port.tx_frame_bytes", math.nan),
                "line rate Mfps": st.get("port.line_rate_mfps", math.nan),
                "port utilisation": st.get("port.rx_utilisation", math.nan),
                "port-bound": bool(st.get("port.rx_utilisation", 0.0) >= PORT_BOUND
                                   or st["capacity.upper_mpps_per_port"] < 0),
                "insts/request": st.get("client.insts_per_request", math.nan),
                "mem queue delay ns": st.get(paths.MEMORY.stat(0, "avg_queue_delay_ps"), math.nan) / 1e3,
                "busiest mem port share": busiest_port_share(st),
                "load latency cycles": common.mean_of(st, paths.CORE, "load_latency_avg", socket=0),
                "mem ports": len(paths.STACK_PORT.instances(st, "reads", socket=0)),
                "measured ms": st.get("client.measured_ns", math.nan) / 1e6,
                "PCIe latency ns": float(row.get("cfg.nic.pcie_latency", math.nan)) / 1e3,
                "probes": int(st["capacity.probes"]), "host s": float(row.get("host_seconds", math.nan)),
            })
    df = pd.DataFrame(rows)
    if not df.empty:
        df = df.sort_values(["platform", "core", "cores", "l2", "memory latency ns", "what_if"]).reset_index(drop=True)
    return df


def _pick(df: Any, platform: str, core: str, cores: int, l2: bool | None = None, latency: float | None = None):
    sel = df[(df.platform == platform) & (df.core == core) & (df.cores == cores) & ~df.what_if]
    if l2 is not None:
        sel = sel[sel.l2 == l2]
    if latency is not None:
        sel = sel[sel["memory latency ns"] == latency]
    return sel


SERVER_TABLE = (("Mercury-32", "mercury", "A7 1 GHz", 32, False), ("Mercury-32", "mercury", "A15 1.5 GHz", 32, False),
                ("Iridium-32", "iridium", "A15 1.5 GHz", 32, True), ("Iridium-32", "iridium", "A7 1 GHz", 32, True),
                ("KeyVault-16", "keyvault", "A15 1.5 GHz", 16, True))
SERVER_COLUMNS = ["server", "core", "stack M req/s", "p95 us", "stack W", "stacks per 1.5U", "limited by", "server W",
                  "server M req/s", "server req/s per W", "server req/s per GB", "GB per server", "port utilisation",
                  "port-bound"]


def server_table(df: Any) -> Any:
    """Mercury-32 (A7, A15), Iridium-32 and KeyVault-16 at 1.5U, with the DRAM at 10 ns (its default)."""
    import pandas as pd

    rows = []
    for label, platform, core, cores, l2 in SERVER_TABLE:
        sel = _pick(df, platform, core, cores, l2)
        if platform != "iridium":
            sel = sel[sel["memory latency ns"] == 10.0]
        if not sel.empty:
            rows.append({"server": f"{label} ({core}{', L2' if l2 else ''})", **sel.iloc[0].to_dict()})
    out = pd.DataFrame(rows)
    return out[[c for c in SERVER_COLUMNS if c in out]] if not out.empty else out


# ---- the network bound --------------------------------------------------------------------------------------

def network_notes(df: Any) -> list[str]:
    """What the statistics say about the port: each stack's 10 GbE utilisation at its capacity, and, from the what-if
    point, whether the PCIe NIC path's latency is what caps the largest A15 Mercury stack below its line rate."""
    if df.empty:
        return []
    notes = []
    bound = df[df["port-bound"] & ~df.what_if]
    if len(bound):
        notes.append("Port-bound (a stack with one 10 GbE port): " + ", ".join(
            f"{r.platform}-{r.cores} {r.core}{' L2' if r.l2 else ''} {r['memory latency ns']:g} ns "
            f"({r['port utilisation']:.0%} of {r['line rate Mfps']:.2f} M frames/s)" for _, r in bound.iterrows()) + ".")
    else:
        notes.append("No stack is port-bound: the busiest port carries "
                     f"{df[~df.what_if]['port utilisation'].max():.0%} of its line rate at the stack's capacity.")
    what_if = df[df.what_if]
    for _, w in what_if.iterrows():
        base = _pick(df, "mercury", w.core, w.cores, False, 10.0)
        if base.empty:
            continue
        b = base.iloc[0]
        frame_b = b["request frame B"]
        text = (f"Mercury-{b.cores} {b.core} (DRAM 10 ns, no L2): capacity {b['offered Mfps']:.2f} M frames/s per "
                f"port with {frame_b:.1f}-byte request frames ({b['response frame B']:.1f}-byte responses); the port "
                f"carries 10e9 / 8 / ({frame_b:.1f} + {WIRE_OVERHEAD}) = {b['line rate Mfps']:.2f} M frames/s, so it "
                f"is {b['port utilisation']:.0%} busy")
        if b["port-bound"]:
            text += ": the stack is port-bound (one 10 GbE port)."
        elif w["offered Mfps"] > b["offered Mfps"] * 1.05:
            text += (f": not the line rate. With the NIC's PCIe link latency cut from {b['PCIe latency ns']:g} ns to "
                     f"{w['PCIe latency ns']:g} ns (one what-if point) the same stack reaches {w['offered Mfps']:.2f} "
                     f"M frames/s ({w['port utilisation']:.0%} of the line rate): the ceiling is the PCIe NIC path's "
                     f"latency, not the cores (at the capacity they run {b['insts/request']:,.0f} instructions per "
                     "request, idle polling included) nor the port. The memory shows how: its mean queueing delay is "
                     f"{b['mem queue delay ns']:.0f} ns ({w['mem queue delay ns']:.0f} ns in the what-if) while it "
                     f"moves only {b['stack mem GB/s']:.1f} GB/s of 100, and its busiest port takes "
                     f"{b['busiest mem port share']:.0%} of all accesses ({b['mem ports']} ports); the cores' mean load "
                     f"latency is {b['load latency cycles']:.1f} cycles ({w['load latency cycles']:.1f} in the "
                     "what-if). That fits how the model times it: the "
                     "NIC's DMA reaches a stack port timestamped a PCIe latency ahead, and a 3D DRAM port serves its "
                     "requests in call order, so the cores' requests to that port wait behind it.")
        else:
            text += (f"; cutting the NIC's PCIe link latency to {w['PCIe latency ns']:g} ns changes it little "
                     f"({w['offered Mfps']:.2f} M frames/s): the PCIe path is not what limits it.")
        with_l2 = _pick(df, "mercury", w.core, w.cores, True, 10.0)
        if not with_l2.empty and not b["port-bound"]:
            l2 = with_l2.iloc[0]
            text += (f" With the 2 MB L2 the same stack reaches {l2['offered Mfps']:.2f} M frames/s "
                     f"({l2['port utilisation']:.0%} of the line rate{', port-bound' if l2['port-bound'] else ''}; "
                     f"memory queueing {l2['mem queue delay ns']:.0f} ns): far fewer of the cores' accesses reach "
                     "the ports.")
        notes.append(text)
    backlog = df[df["p95 us"] > 0.25 * df["measured ms"] * 1e3]
    if len(backlog):
        notes.append("Not a steady state: at the capacity the search found, the p95 latency of "
                     + ", ".join(f"{r.platform}-{r.cores} {r.core}" for _, r in backlog.iterrows())
                     + " exceeds a quarter of the measured window (a backlog that the short run does not show as "
                     "loss): read their throughput as an upper bound.")
    return notes


# ---- plots and report ---------------------------------------------------------------------------------------

def _series(df: Any) -> list[tuple[str, Any]]:
    """The cores study's curves: each platform and core kind, DRAM at 10 ns, Mercury without L2 (Iridium has it)."""
    out = []
    for platform in ("mercury", "iridium"):
        for core in (v[2] for v in CORE_KINDS.values()):
            sel = df[(df.platform == platform) & (df.core == core) & ~df.what_if]
            if platform == "mercury":
                sel = sel[(~sel.l2) & (sel["memory latency ns"] == 10.0)]
            if not sel.empty:
                out.append((f"{platform.capitalize()} {core}", sel.sort_values("cores")))
    return out


def conditions_text(df: Any) -> str:
    """The dense figures' conditions: one stack's capacity per point (a capacity search), scaled to the server."""
    extra = "one stack's capacity (< 1% loss) per point, aggregated into its 1.5U server"
    if "reduced" in getattr(df, "columns", ()):
        extra += "; reduced scale" if bool(df["reduced"].any()) else "; full scale"
    return style.conditions(extra=extra)


def plot_cores(df: Any, path: pathlib.Path) -> None:
    plt = style.pyplot()

    metrics = [("stack M req/s", "M requests/s"), ("stack req/s per W", "requests/s per W"),
               ("stack req/s per GB", "requests/s per GB"), ("server M req/s", "M requests/s"),
               ("server req/s per W", "requests/s per W"), ("server req/s per GB", "requests/s per GB")]
    fig, axes = plt.subplots(2, 3, figsize=(13, 7))
    for ax, (col, unit) in zip(axes.flat, metrics):
        for label, sel in _series(df):
            ax.plot(sel.cores, sel[col], marker="o", label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(list(CORE_COUNTS), [str(c) for c in CORE_COUNTS])
        ax.set_xlabel("cores per stack")
        ax.set_ylabel(unit)
        ax.set_title(("per stack: " if col.startswith("stack") else "per 1.5U server: ") + unit)
        ax.grid(alpha=0.3, which="both")
    style.legend_outside(axes.flat[2])
    fig.suptitle("Mercury-n and Iridium-n (DRAM 10 ns, flash read 20 us; Mercury without L2, Iridium with)")
    style.save(fig, path, "Rates on log axes: they span orders of magnitude. " + conditions_text(df))


def plot_memory(df: Any, path: pathlib.Path) -> None:
    plt = style.pyplot()

    sel = df[(df.platform == "mercury") & ~df.what_if]
    cores = sel.cores.max()
    sel = sel[sel.cores == cores]
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for (core, l2), grp in sel.groupby(["core", "l2"]):
        grp = grp.sort_values("memory latency ns")
        for ax, col in zip(axes, ("stack M req/s", "server req/s per W", "server req/s per GB")):
            ax.plot(grp["memory latency ns"], grp[col], marker="o", label=f"{core}{' + 2 MB L2' if l2 else ''}")
    for ax, col in zip(axes, ("per stack: M requests/s", "per 1.5U: requests/s per W", "per 1.5U: requests/s per GB")):
        ax.set_xlabel("3D DRAM closed-page latency (ns)")
        ax.set_title(col)
        style.rate_axis(ax)
    style.legend_outside(axes[-1])
    fig.suptitle(f"Mercury-{cores}: memory latency, with and without L2")
    style.save(fig, path, conditions_text(df))


def keyvault_frame(df: Any) -> Any:
    """KeyVault-n beside Mercury-n (A15 1.5 GHz without L2, and A7) for every n both have, per stack and per 1.5U."""
    import pandas as pd

    rows = []
    for _, kv in df[(df.platform == "keyvault") & ~df.what_if].sort_values("cores").iterrows():
        for label, sel in (("KeyVault (A15 1.5 GHz, L2)", df.loc[[kv.name]]),
                           ("Mercury (A15 1.5 GHz)", _pick(df, "mercury", "A15 1.5 GHz", kv.cores, False, 10.0)),
                           ("Mercury (A7 1 GHz)", _pick(df, "mercury", "A7 1 GHz", kv.cores, False, 10.0))):
            if not sel.empty:
                r = sel.iloc[0]
                rows.append({"cores": kv.cores, "stack": label, "stack M req/s": r["stack M req/s"],
                             "stack W": r["stack W"], "stacks per 1.5U": r["stacks per 1.5U"],
                             "server M req/s": r["server M req/s"], "server req/s per W": r["server req/s per W"],
                             "server req/s per GB": r["server req/s per GB"], "GB per server": r["GB per server"]})
    return pd.DataFrame(rows)


def plot_keyvault(kv: Any, path: pathlib.Path) -> None:
    plt = style.pyplot()

    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    stacks = list(dict.fromkeys(kv["stack"]))
    counts = sorted(kv.cores.unique())
    width = 0.8 / max(1, len(stacks))
    for ax, col in zip(axes, ("stack M req/s", "server M req/s", "server req/s per W")):
        for i, label in enumerate(stacks):
            grp = kv[kv["stack"] == label].set_index("cores").reindex(counts)
            ax.bar([j + i * width for j in range(len(counts))], grp[col], width, label=label)
        ax.set_xticks([j + width * (len(stacks) - 1) / 2 for j in range(len(counts))], [str(c) for c in counts])
        ax.set_xlabel("cores per stack")
        ax.set_title({"stack M req/s": "per stack: M requests/s", "server M req/s": "per 1.5U: M requests/s",
                      "server req/s per W": "per 1.5U: requests/s per W"}[col])
        style.rate_axis(ax)
    style.legend_outside(axes[-1])
    fig.suptitle("KeyVault vs Mercury")
    style.save(fig, path)


STUDY_COLUMNS = ["platform", "core", "cores", "l2", "memory latency ns", "stack M req/s", "p95 us", "stack W",
                 "stack req/s per W", "stack req/s per GB", "stacks per 1.5U", "server M req/s", "server req/s per W",
                 "server req/s per GB", "port utilisation", "insts/request", "mem queue delay ns",
                 "busiest mem port share"]


def make(tables: dict[str, Any], outdir: pathlib.Path, full: bool | None = None,
         conditions: common.Conditions | None = None, scale: Scale | None = None) -> list[pathlib.Path]:
    c = common.conditions_for(full, conditions)
    scale = scale or scale_for(c)
    text = ("reduced: " if scale is REDUCED or scale.name == "smoke" else "") + \
        f"{scale.name} measurement of whole stacks; the stacks' own data set ({scale.items:,} items); " + \
        ("every point" if scale is not KEY else "the points that carry the conclusion")
    df = frame(tables)
    if not df.empty:
        df["conditions"] = text
    outdir.mkdir(parents=True, exist_ok=True)
    csv = outdir / "dense.csv"
    df.to_csv(csv, index=False)
    paths: list[pathlib.Path] = [csv]
    if df.empty:
        (outdir / "dense.md").write_text("# Dense 3D-stacked servers\n\n(no points)\n")
        return paths + [outdir / "dense.md"]
    table = server_table(df)
    table.to_csv(outdir / "dense_server_table.csv", index=False)
    kv = keyvault_frame(df)
    kv.to_csv(outdir / "dense_keyvault.csv", index=False)
    paths += [outdir / "dense_server_table.csv", outdir / "dense_keyvault.csv"]
    pngs = []
    for name, draw, data in (("dense_cores.png", plot_cores, df), ("dense_memory.png", plot_memory, df),
                             ("dense_keyvault.png", plot_keyvault, kv)):
        if not data.empty:
            draw(data, outdir / name)
            pngs.append(name)
            paths.append(outdir / name)
    cols = [c for c in STUDY_COLUMNS if c in df]
    cores_df = df[~df.what_if & ((df.platform != "mercury") | ((~df.l2) & (df["memory latency ns"] == 10.0)))]
    memory_df = df[(df.platform == "mercury") & ~df.what_if & (df.cores == df[df.platform == "mercury"].cores.max())]
    host = df["host s"].sum()
    lines = [
        "# Dense 3D-stacked servers: Mercury, Iridium and KeyVault", "",
        "Each point is one stack's capacity (the highest offered load with < 1% loss), simulated in detail with "
        "every response checked, priced by the power model and aggregated into its 1.5U server. The studies: cores "
        "per stack (1-32) and A7 vs A15 for Mercury and Iridium; the 3D DRAM's latency (10-100 ns) with and without "
        "L2; KeyVault vs Mercury; the server table; and what bounds the network.", "",
        "## Scale and configuration", "",
        f"- conditions: {text}",
        f"- scale: {scale.name}: {scale.requests_per_core} measured requests per core per probe (at least "
        f"{scale.min_requests}), capacity resolution {scale.resolution:.0%}, at most {scale.max_probes} probes, "
        f"{scale.items:,} items (memcached binary protocol over UDP, {dense.GET_RATIO:.0%} GET, every response "
        "checked), caches warmed over the bulk load",
        "- stacks: configs/mercury.py, configs/iridium.py, configs/keyvault.py as they are; the memory study sets "
        "memory.dram3d.access_latency and caches.l2_enabled; the what-if point sets nic.pcie_latency",
        f"- power per stack: the power model's cores and caches of the best probe + {dense.MAC_POWER_W * 1e3:.0f} mW "
        "MAC + memory power per GB/s moved; the server: models/dense_server.py (96 ports, 472 W for stacks, PHYs and "
        "switches); a server holds as many stacks as its ports and budget allow ('limited by')",
        f"- {len(df)} points, {host:,.0f} s of host time in all (sum over points)", "",
        "## Server table (1.5U)", "", common.markdown_table(table) if not table.empty else "(missing points)", "",
        "## Network bound", "", *[f"- {n}" for n in network_notes(df)], "",
        "## Cores per stack, A7 vs A15", "", common.markdown_table(cores_df[cols].reset_index(drop=True)), "",
        "![cores](dense_cores.png)" if "dense_cores.png" in pngs else "", "",
        "## Memory latency, with and without L2", "", common.markdown_table(memory_df[cols].reset_index(drop=True)),
        "",
        "![memory](dense_memory.png)" if "dense_memory.png" in pngs else "", "",
        "## KeyVault vs Mercury", "", common.markdown_table(kv) if not kv.empty else "(no KeyVault points)", "",
        "![keyvault](dense_keyvault.png)" if "dense_keyvault.png" in pngs else "", "",
        "## Columns", "",
        "- stack M req/s: the capacity (highest offered load with < 1% loss); p95 at that load",
        "- stack W: logic (power model) + memory; server W: stacks + PHYs (+ KVD switches)",
        "- port utilisation: offered request frames x (frame + 24 B preamble, FCS and gap) over the 10 GbE line rate",
        "- insts/request: all instructions of the measured phase over the requests (idle polling included)",
    ]
    report = outdir / "dense.md"
    report.write_text("\n".join(lines) + "\n")
    return paths + [report]
