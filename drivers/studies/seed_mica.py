"""MICA's experiments on MICA's own server (configs/mica_e5_2680_dual.py; Lim et al., NSDI 2014): the throughput of
EREW MICA for each of its four workloads (Uniform or Zipf 0.99, 50% or 95% GET, Tiny items), the load of the
hottest of its 16 partitions under skew, and latency against throughput.

Throughput and latency: the server in detailed timing (reduced to 2 cores per socket), a capacity search per workload (drivers.studies
.seeds), at reduced scale (fewer items, short windows, 10% resolution). Partition load: the 16-core server run
functionally under Zipf 0.99 (which core a request goes to is the client's seeded choice, made before any timing:
drivers/studies/partition_load.py), the hottest partition's requests over the mean partition's.
"""

from __future__ import annotations

import pathlib

import pandas as pd

from configs import _multisocket
from configs import mica_e5_2680_dual as mica
from models.system import System

from ..sweep import RUN_EVALUATOR, Base, Grid, Sweep
from . import common, seeds

NAME = "seed_mica"
CORES_PER_SOCKET = 2            # reduced: 2 of each socket's 8 cores on one port (2 cores per port, as in full)
ITEMS = 1 << 12                 # reduced: the paper's 192 Mi keys do not fit a short simulation
REQUESTS_PER_CORE = 200         # measured requests per core per probe (reduced)
CURVE = (0.5,)                  # fractions of capacity for the latency curve (reduced from seeds.CURVE)
RESOLUTION = 0.1               # the capacity search's resolution (reduced)
PARTITION_ITEMS = 1 << 16       # the functional partition-load runs (client counts only)
PARTITION_REQUESTS_PER_CORE = 1000
WORKLOAD_AXES = {"client.popularity": ["uniform", "zipf"], "client.get_ratio": [0.95, 0.5]}
COMMAND = f"nice -n 15 .venv/bin/python sim-scripts/figures.py --study {NAME} --jobs 1"


def functional_server(items: int = PARTITION_ITEMS, requests_per_core: int = PARTITION_REQUESTS_PER_CORE) -> System:
    """The 16-core server run functionally (the partition-load runs: the client's counts need no timing), each
    partition's index sized for its share of the items."""
    cores = mica.SOCKETS * mica.CORES_PER_SOCKET
    s = _multisocket.functional(mica.system(items=items, requests=requests_per_core * cores))
    buckets = 1 << max(10, (items // cores // 8 - 1).bit_length())     # one 15-entry bucket per 8 items
    s.workload.argv = ["mode=erew", "log_mib=32", f"buckets={buckets}"]
    return s


def sized_from_items(system: System) -> System:
    """The server's log and index sized from the item count (no log_mib= or buckets= arguments), so a data set of
    the paper's size is held whole rather than evicted from the config's 32 MiB logs."""
    system.workload.argv = [a for a in system.workload.argv if not a.startswith(("log_mib=", "log_kib=", "buckets="))]
    return system


def whole_server(**kwargs) -> System:
    """configs/mica_e5_2680_dual.py's server with its store sized from the item count (the paper's conditions)."""
    return sized_from_items(mica.system(**kwargs))


def functional_store(items: int = PARTITION_ITEMS) -> System:
    """functional_server with its store sized from the item count (the paper's conditions)."""
    return sized_from_items(functional_server(items))


def sweeps(full: bool | None = None, conditions: common.Conditions | None = None) -> list[Sweep]:
    """At the paper's conditions (the default): the whole server (8 cores a socket), the paper's data set and a
    steady-state window at each capacity; `reduced`: 2 cores a socket and the study's own small data set."""
    c = common.conditions_for(full, conditions)
    scale = seeds.scale_of(c, ITEMS, REQUESTS_PER_CORE, RESOLUTION, CURVE)
    per_socket = CORES_PER_SOCKET if c.reduced else mica.CORES_PER_SOCKET
    cores = mica.SOCKETS * per_socket
    server = "mica_e5_2680_dual" if c.reduced else f"drivers.studies.{NAME}:whole_server"
    throughput = Sweep("seed-mica" + seeds.suffix(c), Base(server, cores_per_socket=per_socket,
                                                           items=scale.items,
                                                           requests=scale.requests_per_core * cores),
                       Grid(WORKLOAD_AXES), evaluator=seeds.EVALUATOR, options=scale.options())
    partition_items = PARTITION_ITEMS if c.reduced else c.items_or(PARTITION_ITEMS)
    partitions = Sweep("seed-mica-partitions" + seeds.suffix(c),
                       Base(f"drivers.studies.{NAME}:" + ("functional_server" if c.reduced else "functional_store"),
                            items=partition_items),
                       Grid({"client.popularity": ["zipf"], "client.get_ratio": [0.95, 0.5]}),
                       evaluator=RUN_EVALUATOR,
                       share_checkpoint=False)   # functional, one point per data set: a restore adds only its warm-up
    return [throughput, partitions]


def label(row) -> str:
    return f"{row['param.client.popularity']} {round(100 * row['param.client.get_ratio'])}% GET"


def partition_rows(table: pd.DataFrame) -> list[dict]:
    rows = []
    for _, row in table[table.status == "ok"].iterrows():
        st = seeds.stats_of(row)
        per = [st[f"client.partition{c}.requests"] for c in range(int(row["cfg.harts"]))]
        mean = sum(per) / len(per)
        rows.append({"workload": label(row), "partitions": len(per), "requests": int(sum(per)),
                     "hottest / mean": max(per) / mean, "coldest / mean": min(per) / mean,
                     "hottest partition": per.index(max(per))})
    return rows


def make(tables: dict[str, pd.DataFrame], outdir: pathlib.Path, full: bool | None = None,
         conditions: common.Conditions | None = None) -> list[pathlib.Path]:
    c = common.conditions_for(full, conditions)
    scale = seeds.scale_of(c, ITEMS, REQUESTS_PER_CORE, RESOLUTION, CURVE)
    per_socket = CORES_PER_SOCKET if c.reduced else mica.CORES_PER_SOCKET
    text = c.text(scale.items, reduced_as=f"{CORES_PER_SOCKET} of each socket's {mica.CORES_PER_SOCKET} cores")
    partition_items = PARTITION_ITEMS if c.reduced else c.items_or(PARTITION_ITEMS)
    thr, curves = [], []
    for _, row in seeds.table(tables, "seed-mica").query("status == 'ok'").iterrows():
        thr.append({"workload": label(row), **seeds.point_figures(row)})
        curves += seeds.curve_rows(row, label(row))
    thr_df, curve_df = pd.DataFrame(thr), pd.DataFrame(curves)
    part_df = pd.DataFrame(partition_rows(seeds.table(tables, "seed-mica-partitions")))
    for df in (thr_df, curve_df, part_df):
        df["conditions"] = text
    paths = seeds.save_tables(outdir, NAME, {"throughput": thr_df, "latency": curve_df, "partitions": part_df})
    pngs = seeds.plot_throughput_and_latency(thr_df, "workload", "throughput_mrps", curve_df, outdir, NAME,
                                             "sustained (M requests/s)", f"MICA EREW on dual E5-2680 ({text})",
                                             ci="throughput_ci_mrps")
    paths += [outdir / p for p in pngs]
    report = seeds.write(
        outdir, NAME, "MICA on its own server: dual Xeon E5-2680, eight 10 GbE ports"
        + (" (reduced scale)" if c.reduced else ""),
        __doc__.split("\n\n")[0].replace("\n", " "),
        [f"platform: configs/mica_e5_2680_dual.py; throughput and latency with {per_socket} cores per socket "
         f"({mica.SOCKETS * per_socket} cores, {mica.SOCKETS * per_socket // 2} ports"
         + ("; REDUCED: each socket keeps its whole LLC and memory)" if c.reduced else ")"),
         ("REDUCED: " if c.reduced else "") + scale.text() + " (paper: 192 Mi items)",
         f"partition load: functional runs of the 16-core server, {partition_items:,} items, "
         f"{PARTITION_REQUESTS_PER_CORE} requests per core"],
        [("Throughput per workload", thr_df), ("Load of the hottest of the 16 partitions (Zipf 0.99)", part_df),
         ("Latency against throughput", curve_df)],
        pngs,
        ["throughput_mrps: the rate sustained at capacity (offered less loss); p50/p99: round trip at capacity",
         "partition load: the client draws keys from one seeded stream whatever the GET ratio, so both mixes send the "
         "same keys to the same partitions; the item count is reduced, and a Zipf over fewer items gives its top keys "
         "a larger share, so the hottest partition's load here is not the paper-scale figure "
         "(drivers/studies/partition_load.py computes that)",
         "latency: the median at half load is not below the one at capacity; the 82599 model writes RX descriptors "
         "back in groups of 4 or after its 2 us timer, which a light load waits for (a likely cause, not measured "
         "here)",
         "not calibrated to the paper's figures: the platform is built from its hardware facts"],
        COMMAND, conditions=text)
    return paths + [report]
