"""The Tilera study's experiment on the TILEPro64 node (configs/tilepro64.py; Berezecki et al., IGCC 2011): the
throughput, latency and power of one node serving memcached in shard processes over its 64 tiles, of four such
nodes, and requests/s per watt.

One point: all 64 tiles, one shard each, under the memcached-class mix (90% GET, Tiny items), in detailed timing, a
capacity search (drivers.studies.seeds) priced by the power model at the node's 90 nm (the chip's cores, caches,
mesh, memory controllers and I/O, plus its DRAM), at reduced scale (few items, short windows, 10% resolution). Four
nodes share nothing, so their throughput and power are four times one node's (the paper's server aggregation);
the network between the nodes and the clients is not modelled.
"""

from __future__ import annotations

import pathlib

import pandas as pd

from configs import tilepro64 as tile

from ..sweep import Base, List, Sweep
from . import seeds

NAME = "seed_tilepro64"
NODES = 4                       # four nodes (the aggregation)
ITEMS = 1 << 12                 # reduced
REQUESTS_PER_SHARD = 40         # measured requests per shard per probe (--reduced)
# The default run: 200 measured requests per shard (configs/tilepro64.py's default). At 40 the burst of a probe
# (2,560 requests) fits the NIC's rings and the shards' queues, so a probe can show no loss at an offered rate the
# shards do not sustain (measured: 4.4 M req/s offered less loss, 2.5 M req/s answered).
FULL_REQUESTS_PER_SHARD = 200
RESOLUTION = 0.1
CURVE = (0.5,)
GET_RATIO = 0.9                 # the memcached-class mix of the dense-server studies (assumed, drivers/studies/dense.py)
COMMAND = f"nice -n 15 .venv/bin/python sim-scripts/figures.py --study {NAME} --jobs 1"


def node(shards: int = tile.TILES, items: int = ITEMS, requests_per_shard: int = REQUESTS_PER_SHARD):
    """The node, detailed from the measured phase (the bulk load fast-forwards with cache warming)."""
    s = tile.system(shards=shards, items=items, requests=requests_per_shard * shards, get_ratio=GET_RATIO,
                    store_mem="4MiB")
    s.detailed_start, s.warm_caches = "roi", True
    return s


def requests_per_shard(full: bool) -> int:
    return FULL_REQUESTS_PER_SHARD if full else REQUESTS_PER_SHARD


def sweeps(full: bool = False) -> list[Sweep]:
    return [Sweep("seed-tilepro64" + ("" if full else "-reduced"),
                  Base(f"drivers.studies.{NAME}:node", requests_per_shard=requests_per_shard(full)),
                  List([{"client.get_ratio": GET_RATIO}]),
                  evaluator=seeds.EVALUATOR, options={"resolution": RESOLUTION, "curve": list(CURVE), "power": True},
                  share_checkpoint=False)]   # a small data set: every probe warms through its own load


def make(tables: dict[str, pd.DataFrame], outdir: pathlib.Path, full: bool) -> list[pathlib.Path]:
    rows, curves = [], []
    for _, row in tables["seed-tilepro64" + ("" if full else "-reduced")].query("status == 'ok'").iterrows():
        st = seeds.stats_of(row)
        fig = seeds.point_figures(row)
        watts = st["power.socket.runtime_power_W"]
        rows.append({"shards": int(row["cfg.harts"]), **fig, "die W": st["power.die.runtime_power_W"],
                     "DRAM W": st["power.dram.runtime_power_W"], "node W": watts,
                     "cores W": st["power.cores.runtime_power_W"], "die mm2": st["power.die.area_mm2"],
                     "node K req/s per W": fig["throughput_mrps"] * 1e3 / watts,
                     f"{NODES} nodes M req/s": NODES * fig["throughput_mrps"], f"{NODES} nodes W": NODES * watts})
        curves += seeds.curve_rows(row, f"{int(row['cfg.harts'])} shards")
    df, curve_df = pd.DataFrame(rows), pd.DataFrame(curves)
    paths = seeds.save_tables(outdir, NAME, {"node": df, "latency": curve_df})
    pngs = []
    if len(df):
        seeds.plot_curves(curve_df, outdir / f"{NAME}_latency.png", "TILEPro64 node, memcached shards: latency")
        pngs = [f"{NAME}_latency.png"]
        paths += [outdir / p for p in pngs]
    report = seeds.write(
        outdir, NAME, "TILEPro64 node serving memcached shards (reduced scale)", __doc__.split("\n\n")[0]
        .replace("\n", " "),
        ["platform: configs/tilepro64.py, all 64 tiles, 2 on-chip 10 GbE ports",
         f"REDUCED: {ITEMS:,} Tiny items, {requests_per_shard(full)} measured requests per shard per probe, capacity to "
         f"{RESOLUTION:.0%}; latency curve at {', '.join(f'{f:.0%}' for f in CURVE)} of capacity",
         f"{NODES} nodes: {NODES} x one node (nothing shared between nodes)"],
        [("One node and four", df), ("Latency against throughput", curve_df)], pngs,
        ["node W: the power model's runtime power of the chip (die) and its DRAM at the measured load, at 90 nm; "
         "not wall power (no board, PHYs, fans or supplies)",
         "the power model prices each tile as a 3-issue in-order core with the tile's own 32-bit datapath, 32-bit "
         "addresses and no FPU (configs/tilepro64.py technology()), at 90 nm, with McPAT-class laws for a generic "
         "core's undifferentiated logic, caches and routers; McPAT 1.3 on the same export gives a larger die still "
         "(results/power/tilepro64_mcpat.md), and neither is checked against the chip's die area (not in the spec; "
         "the product brief's 19-23 W typical chip power is a figure to set beside die W, not an input), so node W and requests/s per W "
         "are the model's, not a trustworthy prediction for the VLIW tile",
         "approximations of the platform (RV64 in-order cores for the VLIW tiles, line-interleaved homes, DDR2 "
         "timings on the DDR3 model, kvsim's network path instead of Linux): configs/tilepro64.py",
         "not calibrated to the paper's figures"],
        COMMAND + ("" if full else " --reduced"))
    return paths + [report]
