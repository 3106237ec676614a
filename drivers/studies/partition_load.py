"""End-to-end study 4, partition load: the distribution (CDF) of per-core load under Zipf 0.99 on 24, 120 and 240
cores (validation.md), EREW and CREW.

Nothing about the skew is configured. The client draws keys from an exact Zipf(0.99) over the data set (rank 1 =
item 0), hashes each key with the KVS keyhash and steers the request: in EREW to its partition's core (partition =
(keyhash >> 48) mod cores, one partition per core), in CREW GETs round-robin over all cores and PUTs to the owner.
It counts what it sends to each core's queue (`client.core{c}.requests`). A core is hot because the hash happened
to put popular keys in its partition.

Functional mode. The counts are the client's: which key and which core come from its seeded generator when the
request is made, before any timing, so a functional run gives the same counts as a detailed one with the same seed
(`tests/test_e2e_figures.py` checks it) at a small fraction of the cost, and 240 cores fit the host. Load here is
requests per core over the measured phase, normalised to the mean over cores.

Beside the simulated counts, the expected share of every partition computed from the same definitions (Zipf
weights summed per partition, `expected_core_share`), both at the simulated item count and at the paper's data set
size. The simulation is checked against it (a chi-square test in the tests)."""

from __future__ import annotations

import functools
import pathlib
from typing import Any

import numpy as np
import pandas as pd

import configs
from analysis import style
from models import stats_paths as paths

# The key hash and each core's expected share live in drivers/key_shares.py (the capacity search reads them too);
# the study names them as its own.
from ..key_shares import THETA
from ..key_shares import expected_core_share as expected_core_share
from ..key_shares import expected_partition_share as expected_partition_share
from ..key_shares import keyhash_of_items as keyhash_of_items
from ..key_shares import xxh64_rows as xxh64_rows
from ..sweep import Base, Grid, Sweep
from . import common

CORE_COUNTS = (24, 120, 240)
ITEMS = 1 << 20                 # simulated data set (the bulk load is functional, ~0.5 G instructions)
# Measured requests per core: the mean core's count has ~4.5% sampling noise at 500 (reduced: 240 cores in EREW
# take ~140 host s, mostly the other cores polling while the hottest one serves), ~2.2% at 2,000 (full).
REQUESTS_PER_CORE = 500
FULL_REQUESTS_PER_CORE = 2000
PAPER_ITEMS = 192 * (1 << 20)   # kvs-workload.md's Tiny data set, for the expected-share curve at paper scale
MODES = ("erew", "crew")


# The servers the counts are taken on: 24 cores = the dual-socket Xeon as measured, 120 and 240 = the dual- and
# quad-socket targets (run functionally). Any other count takes a share of the target (`functional_platform`).
SERVERS = {24: "xeon_e5_2697v2_dual", 120: "brps_target_dual", 240: "brps_target_quad"}


def system(cores: int, items: int = ITEMS, requests_per_core: int = REQUESTS_PER_CORE, theta: float = THETA,
           get_ratio: float = 0.95):
    """The server of `cores` cores (SERVERS) in functional mode under Zipf(theta). The platform does not change the
    counts (see the module doc)."""
    zipf = dict(popularity="zipf", zipf_theta=theta, get_ratio=get_ratio)
    if cores in SERVERS and SERVERS[cores] in configs.available():
        from configs import _multisocket

        module = configs.load(SERVERS[cores])
        s = _multisocket.functional(module.system(items=items, requests=requests_per_core * cores, **zipf))
        if s.harts != cores:
            raise ValueError(f"configs/{SERVERS[cores]}.py has {s.harts} cores, not {cores}")
    else:
        s = functional_platform(cores, items=items, requests_per_core=requests_per_core, **zipf)
        s.mode, s.detailed_start, s.warm_caches = "functional", "start", False
    # Each partition's index sized to its share of the items (one bucket per 8 items), at least the config's.
    given = [int(a.split("=", 1)[1]) for a in s.workload.argv if a.startswith("buckets=")]
    buckets = max(given + [1 << max(0, (items // cores // 8 - 1).bit_length())])
    s.workload.argv = [a for a in s.workload.argv if not a.startswith("buckets=")] + [f"buckets={buckets}"]
    # The paper's data set needs more guest memory than the configs' default limit (192 Mi items over 24
    # partitions touch about 34 GB): the studies' one rule (common.fit_mem_limit). Whether the host has that much
    # is checked before any run (common.check_fits).
    return common.fit_mem_limit(s)


def functional_platform(cores: int, **kwargs: Any):
    """A platform of `cores` cores for a functional run: the target's share (common.target) up to one socket's
    60 cores; beyond, one flat many-core socket with the target's NICs (3 per 60 cores). A functional run times
    nothing, so only the cores, the NIC queues (one per core) and the client matter."""
    if cores <= common.FULL_CORES:
        return common.target(cores, **kwargs)
    from configs import brps_target_socket as t

    s = common.target(common.FULL_CORES, **kwargs)
    s.harts = cores
    s.caches = t.caches(cores)
    s.noc = t.share_noc()
    s.nics = [t.nic() for _ in range(t.NICS * -(-cores // common.FULL_CORES))]
    s.client.requests = kwargs.get("requests_per_core", common.REQUESTS_PER_CORE) * cores
    return s


def _per_core(c: common.Conditions) -> int:
    return REQUESTS_PER_CORE if c.reduced else FULL_REQUESTS_PER_CORE


def _sweep(cores: int, c: common.Conditions) -> Sweep:
    # The older stores' names (the study's own data set) stay; at a given data set the name carries it.
    name = f"partition-load-{cores}c" + ("" if c.items is None else f"-{common._items_short(c.items)}")
    return Sweep(name, Base("drivers.studies.partition_load:system", cores=cores, items=c.items_or(ITEMS),
                            requests_per_core=_per_core(c)),
                 Grid({"client.mode": list(MODES)}), ties={"client.mode": ("workload.argv[mode]",)},
                 # The mode is in the checkpoint's identity, so no two points share a data set; a restore would
                 # only add its warm-up to these functional runs.
                 share_checkpoint=False)


def sweeps(full: bool | None = None, conditions: common.Conditions | None = None) -> list[Sweep]:
    """The three servers in EREW and CREW. At the paper's conditions (the default): the paper's data set and the
    longer count (FULL_REQUESTS_PER_CORE); every point carries the conclusion (the CDF needs all three servers), so
    the key points are all of them. `reduced`: 500 requests per core and the study's own 2^20 items."""
    c = common.conditions_for(full, conditions)
    if c.reduced and c.items is not None:
        c = common.Conditions(reduced=True, items=None, all_points=c.all_points)
    return [_sweep(cores, c) for cores in CORE_COUNTS]


# ---- the expected share, from the same definitions as the client and server ------------------------------------

# ---- figures ----------------------------------------------------------------------------------------------------

def per_core_counts(row: Any) -> np.ndarray:
    """client.core{c}.requests of a table row (stat.* columns) or a stats dict, in core order."""
    stats = {str(k).removeprefix("stat."): v for k, v in row.items()}
    cores = [c for (c,) in paths.CLIENT_CORE.instances(stats, "requests")]
    return np.array([stats[paths.CLIENT_CORE.stat(c, "requests")] for c in cores], dtype=float)


def load_summary(load: np.ndarray) -> dict[str, float]:
    """Max, percentiles and the hottest cores of a normalised load vector."""
    s = np.sort(load)[::-1]
    return {"max": float(s[0]), "p99": float(np.percentile(load, 99)), "p90": float(np.percentile(load, 90)),
            "median": float(np.median(load)), "min": float(s[-1]),
            "top1_share": float(s[0] / load.sum()), "cores_over_2x": int((load > 2).sum())}


def frame(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per (cores, mode, core): its requests, its load normalised to the mean, and the expected load."""
    rows = []
    for table in tables.values():
        for _, row in table[table.status == "ok"].iterrows():
            counts = per_core_counts(row)
            cores, mode = len(counts), row["param.client.mode"]
            items, get_ratio = int(row["cfg.client.items"]), float(row["cfg.client.get_ratio"])
            expected = expected_core_share(items, cores, mode, get_ratio) * cores
            load = counts / counts.mean()
            for c in range(cores):
                rows.append({"cores": cores, "mode": mode, "core": c, "requests": counts[c], "load": load[c],
                             "expected_load": expected[c], "items": items, "get_ratio": get_ratio})
    return pd.DataFrame(rows)


@functools.lru_cache(maxsize=8)
def _paper_share(items: int, cores: int) -> np.ndarray:
    return expected_partition_share(items, cores)


def summary(df: pd.DataFrame, paper_items: int | None = -1) -> pd.DataFrame:
    """Per (cores, mode): the simulated load's max and percentiles, the expected max at the simulated item count
    and (unless paper_items is None; -1: PAPER_ITEMS) at `paper_items`."""
    paper_items = PAPER_ITEMS if paper_items == -1 else paper_items
    rows = []
    for (cores, mode), g in df.groupby(["cores", "mode"], sort=True):
        s = load_summary(g.load.to_numpy())
        row = {"cores": cores, "mode": mode, **{f"sim_{k}": v for k, v in s.items()},
               "expected_max": float(g.expected_load.max())}
        if paper_items:
            share = _paper_share(paper_items, int(cores))
            get_ratio = float(g.get_ratio.iloc[0])
            core = share if mode == "erew" else (1 - get_ratio) * share + get_ratio / cores
            row[f"expected_max_{_items_text(paper_items)}_items"] = float(core.max() * cores)
        rows.append(row)
    return pd.DataFrame(rows)


def _items_text(items: int) -> str:
    return f"{items >> 20}Mi" if items >= 1 << 20 else f"{items >> 10}Ki"


def plot(df: pd.DataFrame, path: pathlib.Path, caption: str = "") -> None:
    plt = style.pyplot()
    import matplotlib.ticker

    counts = sorted(df.cores.unique())
    fig, axes = plt.subplots(1, len(MODES), figsize=(12, 4.2), sharey=True)
    for ax, mode in zip(np.atleast_1d(axes), MODES):
        for i, cores in enumerate(counts):
            g = df[(df.cores == cores) & (df["mode"] == mode)]
            if g.empty:
                continue
            x = np.sort(g.load.to_numpy())
            ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", color=f"C{i}", label=f"{cores} cores")
            e = np.sort(g.expected_load.to_numpy())
            ax.step(e, np.arange(1, len(e) + 1) / len(e), where="post", color=f"C{i}", linestyle=":", alpha=0.7)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("per-core load / mean load")
        ax.set_title(f"{mode.upper()}, Zipf {THETA}")
        ax.grid(alpha=0.3, which="both")
        style.reference(ax, 1.0, "mean load", axis="x")
        ax.set_ylim(0, 1.0)
    np.atleast_1d(axes)[0].set_ylabel("fraction of cores (CDF)")
    style.legend_outside(np.atleast_1d(axes)[-1], title="simulated (solid), expected (dotted)")
    style.save(fig, path, caption)


def make(tables, outdir: pathlib.Path, full: bool | None = None,
         conditions: common.Conditions | None = None) -> list[pathlib.Path]:
    c = common.conditions_for(full, conditions)
    if c.reduced and c.items is not None:
        c = common.Conditions(reduced=True, items=None, all_points=c.all_points)
    df = frame(tables)
    items = int(df["items"].iloc[0]) if "items" in df and len(df) else c.items_or(ITEMS)
    # The servers are always whole (functional runs); what is reduced is the count per core and the data set.
    text = c.text(items, reduced_as=f"{REQUESTS_PER_CORE} requests per core")
    df["conditions"] = text
    csv, png, sum_csv = outdir / "partition_load.csv", outdir / "partition_load.png", \
        outdir / "partition_load_summary.csv"
    df.to_csv(csv, index=False)
    summ = summary(df)
    summ.to_csv(sum_csv, index=False)
    per_core = _per_core(c)
    plot(df, png, style.conditions(window=f"functional runs of {per_core:,} requests per core", items=items,
                                   extra=text))
    report = common.write_report(
        outdir / "partition_load.md", "Per-core load under Zipf 0.99 (EREW and CREW)",
        __doc__.split("\n\n")[0].replace("\n", " ") + "\n\n" + __doc__.split("\n\n")[2].replace("\n", " "),
        [f"conditions: {text}",
         f"servers: {', '.join(f'{n} cores: configs/{m}.py' for n, m in SERVERS.items())}, System.mode = functional",
         f"client.popularity = zipf, zipf_theta = {THETA}, get_ratio = 0.95, items = {items:,} (tiny)",
         f"client.requests = {per_core:,} x cores; client.mode and the server's mode= argument: erew, crew"],
        "load = a core's requests / the mean over cores; expected = from the Zipf weights of the keys each "
        "core serves (the same keyhash and steering)\n\n" + common.markdown_table(summ), [png.name],
        [f"expected_max_{_items_text(PAPER_ITEMS)}_items: the hottest core's expected load with the paper's Tiny data "
         "set (the fewer the items, the larger the hottest key's share)"])
    return [csv, sum_csv, png, report]
