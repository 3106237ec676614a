"""Study 2, LLC capacity: throughput and LLC MPKI vs LLC capacity per core (256 KB, 512 KB, 768 KB, 1 MB, 2 MB),
STANDARD workload (tiny items, uniform, 95% GET), EREW, DDIO limited to 10% of the LLC (validation.md). The data
set must be far larger than the LLC: the paper's conditions use its 192 Mi items, or the smaller data set a run
names (the conditions line says which); the study's own data sets, 2^20 items on the reduced share (about 40 MB of
log and 16 MB of index against at most 8 MB of LLC) and 2^22 on the 60-core comparison, are kept for those runs.
Throughput is each point's capacity (< 1% loss). Two guest drivers: MICA's DPDK buffer footprint (the server's
default) and the compact driver before it (DRIVERS).

    python -m drivers.cli.figures --study llc --items 16777216 --sweep llc-60c-16Mi-key-compact-driver   # one"""

from __future__ import annotations

import json
import math
import pathlib

import pandas as pd

from analysis import style

from ..sweep import CAPACITY_EVALUATOR, DEFAULT_STORE, Base, Grid, Sweep, checkpoint_dir
from . import common

PER_CORE_KB = [256, 512, 768, 1024, 2048]
REDUCED_ITEMS = 1 << 20
FULL_ITEMS = 1 << 22
WARM_LAST_INSTS = 100_000_000   # cache warming over the last 100 M instructions of the bulk load (common.target)
# The data set is loaded once per sweep and checkpointed; every probe restores it and warms its caches over this
# many requests of its own measured mix per core (client.warmup_requests). Measured at 4 cores, 2^20 items, 768 KB
# of LLC per core (`sim-scripts/checkpoint_study.py study-warmup llc DIR 0 100000 200000 400000 800000`): LLC MPKI
# 5.86 without warm-up, 3.73 / 3.77 / 3.82 / 3.78 after 100k / 200k / 400k / 800k requests, throughput 11.7, 15.5,
# 15.5, 16.0, 15.5 M req/s: 100k is within 1.1% (MPKI) and 0.4% (throughput) of 800k. A run that warms over the
# load's last 100 M instructions instead gives 4.39 and 12.9: the LLC then holds the load's lines, not the measured
# mix's. Scaling the warm-up with the cores (and so with the LLC, 768 KB per core) at 60 cores is assumed.
WARMUP_REQUESTS_PER_CORE = 25_000


def _base(cores: int, items: int, **extra) -> Base:
    return Base("drivers.studies.common:target", cores=cores, items=items, buckets=_buckets(cores, items),
                warm_last_insts=WARM_LAST_INSTS, warmup_requests=WARMUP_REQUESTS_PER_CORE * cores, **extra)


def _buckets(cores: int, items: int) -> int:
    """Index buckets a partition: the study's own data sets take one bucket (15 entries) per 8 items of a partition.
    The paper's data set takes the config's index sized from the item count (0), as every other study's points at
    those conditions do, so that one load serves them all: the study's rule, rounded to a power of two, gives 6.4
    items a bucket there and drops about 826 items a partition to full buckets (the run's ServerEvicts warning; their
    GETs miss), and both indexes (4 GB and 16 GB over the socket) are far larger than any LLC the study sweeps."""
    return 0 if items >= common.PAPER_ITEMS else max(1024, items // cores // 8)


KEY_PER_CORE_KB = [512, 768, 1024]   # the paper's choice (768 KB per core) and its neighbours

# The guest driver's I/O buffers, which DDIO writes into the LLC (issue 28: the LLC study with the default driver
# and with MICA's DPDK buffer footprint). The KVS server's driver defaults to MICA's DPDK set-up since the Xeon
# issue's driver (workloads/kvs/kvs_server.c kvs_config_default: 128 RX and 512 TX descriptors per queue, buffers of
# a 64-byte mbuf header + 128 bytes of headroom + a 2,048-byte data room, a per-core cache of RX + TX + 32 buffers).
# The compact driver is the one before it (128 TX descriptors, buffers of the 2,048-byte data room alone), whose I/O
# footprint the issue puts at about 24 KB per core; it frees sent TX buffers at every burst (tx_free = its ring),
# where DPDK's holds them until fewer than 32 descriptors are free. Name -> (server arguments added, label,
# sweep-name suffix).
DRIVERS = {
    "dpdk": ((), "MICA's DPDK buffer footprint (the server's default)", ""),
    "compact": (("tx_ring=128", "tx_free=128", "buf_headroom=0", "buf_meta=0"), "compact driver (128 TX "
                "descriptors, bare 2 KB buffers)", "-compact-driver"),
}


def _sweep(name, cores, items, kbs, steady: bool = False, driver: str = "dpdk") -> Sweep:
    options = {"resolution": common.CAPACITY_RESOLUTION, **({"steady": True} if steady else {})}
    extra = {"server_args": DRIVERS[driver][0]} if DRIVERS[driver][0] else {}     # the default's points keep their keys
    return Sweep(name + DRIVERS[driver][2], _base(cores, items, **extra),
                 Grid({"caches.llc.size": [kb * 1024 * cores for kb in kbs]}),
                 evaluator=CAPACITY_EVALUATOR, options=options,
                 share_checkpoint=True)   # the data set is loaded once; every probe of every point restores it


def sweeps(full: bool | None = None, conditions: common.Conditions | None = None) -> list[Sweep]:
    """The study's sweeps, one per driver (DRIVERS), the server's default first."""
    c = common.conditions_for(full, conditions)
    if c.items is None:          # the study's own data sets (before issue 28)
        return [_sweep(f"llc-{c.cores}c", c.cores, FULL_ITEMS if c.full else REDUCED_ITEMS, PER_CORE_KB, driver=d)
                for d in DRIVERS]
    kbs = PER_CORE_KB if c.all_points or c.reduced else KEY_PER_CORE_KB
    return [_sweep(f"llc-{c.tag()}", c.cores, c.items, kbs, steady=True, driver=d) for d in DRIVERS]


def compare_sweep() -> Sweep:
    return _sweep(f"llc-{common.FULL_CORES}c-compare", common.FULL_CORES, FULL_ITEMS, [256, 768, 2048])


def frame(table: pd.DataFrame) -> pd.DataFrame:
    rows = []
    ok = table[table.status == "ok"] if "status" in table else table.iloc[0:0]   # a store with no point yet
    for _, row in ok.iterrows():
        f = common.figures_of(row)
        rows.append({"llc_per_core_kb": int(row["param.caches.llc.size"]) // 1024 // f["cores"],
                     "items": row["cfg.client.items"], **f})
    if not rows:
        return pd.DataFrame({"llc_per_core_kb": pd.Series([], dtype=int)})
    return pd.DataFrame(rows).sort_values("llc_per_core_kb").reset_index(drop=True)


def driver_frames(tables: dict[str, pd.DataFrame], name: str) -> dict[str, pd.DataFrame]:
    """Each driver's frame (DRIVERS order) from the tables of the sweeps named `name` + the driver's suffix; a
    single table (an older call) is the default driver's."""
    if len(tables) == 1 and name not in tables:
        return {"dpdk": frame(next(iter(tables.values())))}
    return {d: frame(tables[name + suffix]) for d, (_, _, suffix) in DRIVERS.items() if name + suffix in tables}


# The three MPKI series the LLC study plots (issue 28 item 3): column, colour, marker, legend.
MPKI_SERIES = (("llc_demand_mpki", "tab:red", "o", "LLC MPKI: demand (loads, stores, fetches)"),
               ("llc_sw_prefetch_mpki", "tab:orange", "s", "LLC MPKI: software prefetches"),
               ("llc_dma_mpki", "tab:purple", "^", "LLC MPKI: DMA / DDIO allocations"))


# The MPKI axis goes logarithmic where the series plotted span more than this factor: at full conditions the software
# prefetches' misses (about 3.7 MPKI) are over 10,000 times the DMA allocations', which a linear axis draws as one
# line at zero with the demand misses. It is symmetric-log (linear below the smallest nonzero value's decade), so
# a series at exactly zero (no DMA allocation in the window) is still drawn, at the bottom.
MPKI_LOG_SPAN = 100.0


def mpki_log_threshold(frames: dict[str, pd.DataFrame]) -> float | None:
    """The linear range of a symmetric-log MPKI axis (the decade of the smallest nonzero value) where the split MPKI
    series' nonzero values span more than MPKI_LOG_SPAN; None: a linear axis."""
    series = [f[c] for f in frames.values() for c, *_ in MPKI_SERIES if c in f]
    if not series:  # frames measured before the MPKI split (a total llc_mpki only): nothing to span
        return None
    values = pd.concat(series, ignore_index=True)
    values = values[values > 0].dropna()
    if not len(values) or float(values.max() / values.min()) <= MPKI_LOG_SPAN:
        return None
    return float(10 ** math.floor(math.log10(values.min())))


BAR_COLORS = {"dpdk": "tab:blue", "compact": "lightsteelblue"}
LINE_STYLES = {"dpdk": "-", "compact": "--"}


def plot(frames: pd.DataFrame | dict[str, pd.DataFrame], path: pathlib.Path, caption: str = "") -> None:
    """Throughput bars (with their intervals) and the MPKI series against LLC capacity per core, one bar and one
    line style per driver measured (`frames`: driver -> frame; a bare frame is the default driver's)."""
    plt = style.pyplot()

    frames = {"dpdk": frames} if isinstance(frames, pd.DataFrame) else {d: f for d, f in frames.items() if len(f)}
    kbs = sorted({int(k) for f in frames.values() for k in f.llc_per_core_kb})
    pos = {kb: i for i, kb in enumerate(kbs)}
    width = 0.8 / max(1, len(frames))
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax2 = ax.twinx()
    for n, (driver, df) in enumerate(frames.items()):
        label = "" if len(frames) == 1 else f" ({DRIVERS[driver][1]})"
        x = [pos[int(k)] + (n - (len(frames) - 1) / 2) * width for k in df.llc_per_core_kb]
        ax.bar(x, df.throughput_mrps, width=width, color=BAR_COLORS[driver], label="throughput" + label)
        if "throughput_ci_mrps" in df and df.throughput_ci_mrps.notna().any():   # the steady window's 95% interval
            style.interval(ax, x, df.throughput_mrps, df.throughput_mrps + df.throughput_ci_mrps,
                           df.throughput_mrps - df.throughput_ci_mrps, label=style.STEADY_INTERVAL if n == 0 else None)
        elif "throughput_upper_mrps" in df:
            style.interval(ax, x, df.throughput_mrps, df.throughput_upper_mrps)
        xs = x                              # each driver's MPKI beside its own bar, not on top of the other's
        if "llc_demand_mpki" in df and df.llc_demand_mpki.notna().any():
            # The split of issue 28 (models/stats_paths.py LLC_METRICS); the hardware prefetchers are off (zero).
            for column, color, marker, name in MPKI_SERIES:
                ax2.plot(xs, df[column], color=color, marker=marker, linestyle=LINE_STYLES[driver],
                         label=name + label)
        else:                               # a frame from before the split
            ax2.plot(xs, df.llc_mpki, color="tab:red", marker="o", linestyle=LINE_STYLES[driver],
                     label="LLC MPKI" + label)
    style.rate_axis(ax, "throughput (M requests/s)")
    main = frames.get("dpdk", next(iter(frames.values()), None))
    if main is not None and style.CHOSEN_LLC_PER_CORE_KB in list(main.llc_per_core_kb):
        chosen = list(main.llc_per_core_kb).index(style.CHOSEN_LLC_PER_CORE_KB)
        style.design_point(ax, pos[style.CHOSEN_LLC_PER_CORE_KB] - (len(frames) - 1) / 2 * width,
                           float(main.throughput_mrps.iloc[chosen]),
                           f"the paper's choice ({style.CHOSEN_LLC_PER_CORE_KB} KB per core)")
    ax.set_xticks(list(range(len(kbs))), [f"{k} KB" if k < 1024 else f"{k // 1024} MB" for k in kbs])
    ax.set_xlabel("LLC capacity per core")
    if (threshold := mpki_log_threshold(frames)) is not None:
        ax2.set_yscale("symlog", linthresh=threshold)
        top = max(float(f[c].max()) for f in frames.values() for c, *_ in MPKI_SERIES if c in f)
        ax2.set_ylim(0, top * 3)            # the largest series' markers whole, below the frame
        ax2.set_ylabel(f"LLC MPKI (log scale; linear below {threshold:g})")
    else:
        style.rate_axis(ax2, "LLC MPKI")
    ax2.grid(False)
    ax2.spines["right"].set_visible(True)
    style.legend_outside(fig, bbox_to_anchor=(1.0, 0.95))
    style.save(fig, path, caption)


# The headline ratios: name -> (from, to) LLC per core in KB.
HEADLINE_RATIOS = {"256 KB -> 512 KB": (256, 512), "512 KB -> 768 KB": (512, 768), "768 KB -> 1 MB": (768, 1024),
                   "768 KB -> 2 MB": (768, 2048)}


def headline(df: pd.DataFrame) -> dict[str, float]:
    """The headline ratios of the default driver's throughput; NaN for each where a point was not run, every one when
    that driver has no point (a store holding only the compact driver's points once crashed the report here)."""
    t = df.set_index("llc_per_core_kb").throughput_mrps.to_dict() if "throughput_mrps" in df else {}

    def ratio(a: int, b: int) -> float:          # NaN where a point was not run (the key points only)
        return t[b] / t[a] if a in t and b in t else float("nan")
    return {name: ratio(a, b) for name, (a, b) in HEADLINE_RATIOS.items()}


def driver_ratios(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """At each LLC size both drivers were measured: the default (DPDK footprint) driver's throughput over the compact
    driver's, with the 95% half-width from the two steady-state intervals (first order: the relative half-widths
    add in quadrature)."""
    cols = ["llc_per_core_kb", "throughput_mrps", "throughput_ci_mrps"]
    if any(d not in frames or not set(cols) <= set(frames[d]) for d in ("dpdk", "compact")):
        return pd.DataFrame({"llc_per_core_kb": pd.Series([], dtype=int)})
    both = frames["dpdk"][cols].merge(frames["compact"][cols], on="llc_per_core_kb", suffixes=("_dpdk", "_compact"))
    ratio = both.throughput_mrps_dpdk / both.throughput_mrps_compact
    half = ratio * ((both.throughput_ci_mrps_dpdk / both.throughput_mrps_dpdk) ** 2 +
                    (both.throughput_ci_mrps_compact / both.throughput_mrps_compact) ** 2) ** 0.5
    return pd.DataFrame({"llc_per_core_kb": both.llc_per_core_kb, "dpdk_over_compact": ratio,
                         "half_width_95": half})


def not_run(kbs: list[int], df: pd.DataFrame | None) -> list[int]:
    """The LLC sizes per core of the conditions' points that have no measurement in `df`."""
    done = set() if df is None or not len(df) else {int(k) for k in df.llc_per_core_kb}
    return [kb for kb in kbs if kb not in done]


def _kb_list(kbs: list[int]) -> str:
    return ", ".join(f"{k} KB" if k < 1024 else f"{k // 1024} MB" for k in kbs)


def not_run_text(kbs: list[int], df: pd.DataFrame | None) -> str:
    missing = not_run(kbs, df)
    return (f"Not run at these conditions (no figure, not interpolated): {_kb_list(missing)} per core." if missing
            else "Every point of these conditions was measured.")


def load_texts(c: common.Conditions, tables: dict[str, pd.DataFrame] | None = None) -> list[str]:
    """Host time of each driver's shared load (the data set loaded once, checkpointed, restored by every probe),
    from its record in the checkpoints of the store the sweep ran in (its table's attrs["checkpoint_root"], which
    `figures` sets; else the default store); said when there is none (loaded elsewhere or not yet)."""
    if c.items is None or c.reduced:
        return []
    out = []
    for driver, sw in zip(DRIVERS, sweeps(conditions=c)):
        data_set = sw.resolve()[0].data_set
        table = (tables or {}).get(sw.name)
        root = pathlib.Path(table.attrs.get("checkpoint_root", DEFAULT_STORE)) if table is not None else DEFAULT_STORE
        record = checkpoint_dir(root, data_set).with_suffix(".json")
        if record.exists():
            r = json.loads(record.read_text())
            out.append(f"shared load, {DRIVERS[driver][1]}: {r['insts'] / 1e9:.2f} G instructions, "
                       f"{r['cpu_seconds']:.0f} s CPU, {r['host_seconds']:.0f} s wall, checkpoint "
                       f"{r['bytes'] / 1e9:.2f} GB (once per driver; not in the points' host time)")
        else:
            out.append(f"shared load, {DRIVERS[driver][1]}: no record in {root.name}/checkpoints "
                       f"(data set {data_set}: not loaded in this store)")
    return out


TABLE_COLUMNS = ["llc_per_core_kb", "throughput_mrps", "throughput_ci_mrps", "llc_mpki", "llc_demand_mpki",
                 "llc_sw_prefetch_mpki", "llc_dma_mpki", "l1d_mpki", "mem_read_gbs", "mem_write_gbs", "p95_steady_us",
                 "p95_steady_ci_us", "ipc", "probes", "window_requests", "host_seconds", "cpu_seconds"]


def make(tables, outdir: pathlib.Path, full: bool | None = None,
         conditions: common.Conditions | None = None) -> list[pathlib.Path]:
    """llc.csv (the server's default driver: the headline ratios), llc_compact_driver.csv when that sweep has
    points, one plot of both, and the report."""
    c = common.conditions_for(full, conditions)
    cores = c.cores
    frames = driver_frames(tables, f"llc-{c.tag()}")
    df = frames.get("dpdk", frame(pd.DataFrame()))
    for f in frames.values():
        f["conditions"] = c.text(int(f["items"].iloc[0]) if len(f) else None)
    conditions_text = df["conditions"].iloc[0] if len(df) else c.text()
    csv, png = outdir / "llc.csv", outdir / "llc.png"
    df.to_csv(csv, index=False)
    csvs = [csv]
    for driver, f in frames.items():
        if driver != "dpdk" and len(f):
            csvs.append(outdir / f"llc_{driver}_driver.csv")
            f.to_csv(csvs[-1], index=False)
    missing = "; ".join(f"{DRIVERS[d][1].split(' (')[0]} not run at {_kb_list(m)}" for d in DRIVERS
                        if (m := not_run(PER_CORE_KB if c.all_points or c.reduced or c.items is None
                                         else KEY_PER_CORE_KB, frames.get(d))))
    windows = ""
    if "window_requests" in df and df.window_requests.notna().any():   # steady windows: their sizes, not the probes'
        probe, w = df.get("requests", pd.Series(dtype=float)).dropna(), df.window_requests.dropna()
        windows = (f"capacity probes of {int(probe.max()):,} requests, " if len(probe) else "") + \
            "steady windows of " + (f"{int(w.min()):,}" if w.min() == w.max() else f"{int(w.min()):,} to {int(w.max()):,}") + \
            " requests"
        df_caption = df.drop(columns=["requests"], errors="ignore")
    else:
        df_caption = df
    plot(frames, png, style.conditions_of(df_caption, full=c.full, cores=cores,
                                          extra="; ".join(x for x in (conditions_text, windows, missing) if x)))
    heads = headline(df)
    sections = ["### Headline ratios (throughput, the server's default driver)\n\n" +
                common.markdown_table(pd.DataFrame({"change": list(heads), "ratio": list(heads.values())}))]
    kbs = PER_CORE_KB if c.all_points or c.reduced or c.items is None else KEY_PER_CORE_KB
    for driver in DRIVERS:
        f = frames.get(driver, frame(pd.DataFrame()))
        cols = common.with_confirmation(f, [col for col in TABLE_COLUMNS if col in f])
        sections.append(f"### {DRIVERS[driver][1]}\n\n" + (common.markdown_table(f[cols]) if len(f) else
                                                            "(no point measured at these conditions yet)") +
                        "\n\n" + not_run_text(kbs, f))
    ratios = driver_ratios(frames)
    if len(ratios):
        sections.append("### MICA's DPDK footprint over the compact driver (throughput, +- 95%)\n\n" +
                        "\n".join(f"- {_kb_list([int(r.llc_per_core_kb)])}: {r.dpdk_over_compact:.3f} +- "
                                   f"{r.half_width_95:.3f}" for r in ratios.itertuples()) +
                        "\n\nWhere the difference comes from, one driver argument at a time on a reduced share: "
                        "results/figures-reduced/llc/driver_gap_20c_overload.md (`sim-scripts/driver_gap.py`).")
    items = int(df['items'].iloc[0]) if len(df) else (c.items or (FULL_ITEMS if c.full else REDUCED_ITEMS))
    report = common.write_report(
        outdir / "llc.md", "LLC capacity per core", __doc__.split("\n\n")[0].replace("\n", " "),
        [f"conditions: {conditions_text}", f"scale: {common.scale_text(cores)} (the LLC size is the swept value)",
         "caches.llc.size = " + ", ".join(f"{k} KB" for k in PER_CORE_KB) + " x cores",
         f"client.items = {items} (tiny: 40-byte log entries), index buckets per partition = "
         + ("sized from the item count by the config, as every study's points at the paper's data set"
            if _buckets(cores, items) == 0 else "items / cores / 8") + "; DDIO (nic.ddio_ways) 10% as in the config",
         *(f"driver {DRIVERS[d][1]}: server arguments "
           f"{' '.join(DRIVERS[d][0]) if DRIVERS[d][0] else 'as in the config'}" for d in DRIVERS),
         "the data set is loaded once and checkpointed; each probe restores it and warms its caches over "
         f"{WARMUP_REQUESTS_PER_CORE * cores:,} requests of its measured mix (client.warmup_requests)",
         f"throughput: capacity search to {common.CAPACITY_RESOLUTION:.0%} resolution, then the steady-state "
         "window at the capacity (throughput_ci_mrps: its 95% interval); probes: the capacity search's probes; "
         "window_requests: the last steady-state window's measured requests; host_seconds / cpu_seconds: the point's "
         "wall and CPU time (capacity search and windows; the shared load is the checkpoint's own)",
         *load_texts(c, tables)],
        "\n\n".join(sections), [png.name], common.confirmation_notes(df),
        metrics=["steady.throughput", "llc.demand_mpki", "llc.sw_prefetch_mpki", "llc.dma_mpki",
                 "llc.hw_prefetch_mpki", "steady.p95_ns"])
    return [*csvs, png, report]
