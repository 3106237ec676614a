"""KV-Cache's experiment on four Xeon E5-4640 (configs/kvcache_e5_4640_quad.py; Waddington et al.): the throughput
and latency of 64-byte GETs per socket (one socket with its NIC) and with four NICs (four sockets, one NIC each).

Each point is a capacity search in detailed timing (drivers.studies.seeds) with a latency curve below it: one whole
socket and the whole server by default, 2 of each socket's 8 cores with --reduced; few items, short windows and 10%
resolution in both. Per socket = the 4-socket server's throughput over 4, beside the 1-socket run's.
"""

from __future__ import annotations

import pathlib

import pandas as pd

from models import stats_paths

from ..sweep import Base, List, Sweep
from . import seeds

NAME = "seed_kvcache"
# (sockets, cores per socket). The paper's conditions (figures.py's default): one whole socket (8 cores) with its NIC
# and the whole server (4 x 8 cores) with its four NICs. Reduced (--reduced): both with 2 cores per socket, and one
# whole socket.
FULL_POINTS = ((1, 8), (4, 8))
REDUCED_POINTS = ((1, 2), (4, 2), (1, 8))
CORES_PER_SOCKET = 2            # the reduced points' cores per socket (8 in full)
ITEMS = 1 << 12                 # the data set (KV-Cache's own is not in the spec: assumed, small for short runs)
REQUESTS_PER_CORE = 150         # measured requests per core per probe (reduced)
RESOLUTION = 0.1
CURVE = (0.5,)
COMMAND = f"nice -n 15 .venv/bin/python sim-scripts/figures.py --study {NAME} --jobs 1"


def points(full: bool) -> tuple[tuple[int, int], ...]:
    return FULL_POINTS if full else REDUCED_POINTS


def sweeps(full: bool = False) -> list[Sweep]:
    return [Sweep(f"seed-kvcache-{s}s" + ("" if c == CORES_PER_SOCKET else f"-{c}c") + ("" if full else "-reduced"),
                  Base("kvcache_e5_4640_quad", sockets=s, cores_per_socket=c, items=ITEMS,
                       requests=REQUESTS_PER_CORE * c * s),
                  List([{"client.get_ratio": 1.0}]), evaluator=seeds.EVALUATOR,
                  options={"resolution": RESOLUTION, "curve": list(CURVE)},
                  share_checkpoint=False)   # a small data set: every probe warms through its own load
            for s, c in points(full)]


def make(tables: dict[str, pd.DataFrame], outdir: pathlib.Path, full: bool) -> list[pathlib.Path]:
    rows, curves = [], []
    for table in tables.values():
        for _, row in table.query("status == 'ok'").iterrows():
            sockets = len(stats_paths.NIC_PORT.instances(seeds.stats_of(row), "rx_frames"))    # one 1-port NIC each
            fig = seeds.point_figures(row)
            rows.append({"sockets (= NICs)": sockets, "cores": int(row["cfg.harts"]), **fig,
                         "per socket M req/s": fig["throughput_mrps"] / sockets})
            curves += seeds.curve_rows(row, f"{sockets} socket(s), {int(row['cfg.harts'])} cores")
    df, curve_df = pd.DataFrame(rows), pd.DataFrame(curves)
    paths = seeds.save_tables(outdir, NAME, {"throughput": df, "latency": curve_df})
    pngs = seeds.plot_throughput_and_latency(df, "sockets (= NICs)", "per socket M req/s", curve_df, outdir, NAME,
                                             "sustained per socket (M requests/s)",
                                             "KV-Cache, E5-4640, 64-byte GETs" + ("" if full else " (reduced)"))
    paths += [outdir / p for p in pngs]
    report = seeds.write(
        outdir, NAME, "KV-Cache platform: four Xeon E5-4640, one 10 GbE NIC per socket"
        + ("" if full else " (reduced scale)"),
        __doc__.split("\n\n")[0].replace("\n", " "),
        [f"platform: configs/kvcache_e5_4640_quad.py; points (sockets, cores per socket) {points(full)}"
         + (": every core of each socket" if full else f": REDUCED to {CORES_PER_SOCKET} cores per socket but for the "
            "last (each socket keeps its whole LLC, memory and NIC)"),
         f"REDUCED window: {ITEMS:,} items (16 B keys, 64 B values; the paper's data set is not in the spec), "
         f"{REQUESTS_PER_CORE} measured requests per core per probe, capacity to {RESOLUTION:.0%}; latency curve at "
         f"{', '.join(f'{f:.0%}' for f in CURVE)} of capacity"],
        [("Throughput per socket and with four NICs", df), ("Latency against throughput", curve_df)], pngs,
        ["busiest_port_tx_gbps: the port's transmit rate on the wire at capacity; a 64-byte GET response is a "
         "142-byte frame (166 bytes on the wire), so one 10 GbE port carries at most 7.5 M responses/s",
         "the workload is the memcached-class server over UDP, not KV-Cache's own store and user-level stack "
         "(configs/kvcache_e5_4640_quad.py says what differs)", "not calibrated to the paper's figures"],
        COMMAND + ("" if full else " --reduced"))
    return paths + [report]
