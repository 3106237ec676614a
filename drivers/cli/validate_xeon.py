#!/usr/bin/env python3
"""The STANDARD workload on one socket of the Xeon E5-2697 v2 baseline, next to the published measurements.

    sim-scripts/validate_xeon.py [--cores 1,2,3,4,8,12,24] [--requests-per-core N] [--items N] [--search]
                                 [--no-target] [--target-cores 60]

For each core count up to 12 it runs configs/xeon_e5_2697v2_socket.py (two cores per 10 GbE port; 1 to 3 cores
share one port, as in the measurements), and for 24 cores the dual-socket server as measured
(configs/xeon_e5_2697v2_dual.py: 2 x 12 cores, 12 x 10 GbE ports), in detailed mode, the measured phase timed, and
prints throughput, IPC, RX batch size, MPKI and miss rate per cache level, memory bandwidth, network bandwidth and
p95 latency beside the figures of ../shared/spec/validation.md, with the error of each (figures of several sockets
are summed: bandwidths; or averaged over every core or socket: IPC, MPKI, miss rates), and the run's power from the
power model (power.price_run): the CPUs as power/unmodelled.py adds a socket up beside the measurement, the NIC
chips, the DRAM devices, and their sum against the power measured at the wall (the rest of the server, fans, disks,
board and supply losses, is not modelled). Then the same run on one
socket of the billion-RPS target (configs/brps_target_socket.py: 60 cores, 3 x 100 GbE), which has no published
measurements to compare with.

Operating point: by default the client offers each port its line rate for the smallest frames, open loop (the
measurements are at saturation: the server takes what it can and the NIC drops the rest); throughput is the
requests answered per second and the latency is that of the answered requests, queueing in a full RX FIFO
included. With --search, each point is instead the highest offered load with < 1% loss (drivers/capacity.py,
several runs per point; slow). The published numbers live only in this script, never in the models.

Where the published figure is a 2-socket measurement (4 cores on 2 ports over 2 sockets; 24 cores on 12 ports),
the 4-core row compares with it as is (same cores and ports), the 12-core row with half of the 24-core one, and
the 24-core row (both sockets) with the measurement itself.
Caveats printed with the table: the data set (--items) is said against the paper's 192 Mi items in every output (this
host's memory holds about 1/8 of it at most: a reduced run), and frames are 80-byte GET / 88-byte PUT requests.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import configs
from configs import brps_target_socket, xeon_e5_2697v2_socket
from drivers import capacity
from models import stats_paths
from models.sim import RunResult, simulate, sized_warmup_requests
from models.socket import core_path, socket_path

ROOT = pathlib.Path(__file__).resolve().parents[2]

DUAL = "xeon_e5_2697v2_dual"   # the measured server: two sockets of 12 cores, 12 x 10 GbE

# ../shared/spec/validation.md, "Measured on the dual-socket Xeon E5-2697 v2 baseline" (comparison only).
PUBLISHED: dict[int, dict[str, float]] = {
    1: {"throughput_mrps": 5.78, "ipc": 1.91, "rx_batch": 32.0},
    2: {"net_rx_gbps": 9.76},
    3: {"rx_batch": 5.29},
    4: {"throughput_mrps": 23.33, "net_tx_gbps": 19.31, "net_rx_gbps": 19.51, "mem_read_gbs": 6.21,
        "mem_write_gbs": 0.23, "l1d_miss_rate": 0.015, "l1d_fills_per_load": 0.015, "l2_miss_rate": 0.32},
    8: {"l1d_miss_rate": 0.015, "l1d_fills_per_load": 0.015, "l2_miss_rate": 0.32},
    # Half of the 24-core, 12-port, 2-socket measurement.
    12: {"throughput_mrps": 120.5 / 2, "net_tx_gbps": 99.66 / 2, "net_rx_gbps": 105.45 / 2,
         "mem_read_gbs": 34.97 / 2, "mem_write_gbs": 2.89 / 2, "l1d_miss_rate": 0.015, "l1d_fills_per_load": 0.015,
         "l2_miss_rate": 0.32},
    # The 24-core, 12-port, 2-socket measurement itself.
    24: {"throughput_mrps": 120.5, "net_tx_gbps": 99.66, "net_rx_gbps": 105.45, "mem_read_gbs": 34.97,
         "mem_write_gbs": 2.89, "l1d_miss_rate": 0.015, "l1d_fills_per_load": 0.015, "l2_miss_rate": 0.32,
         # Measured at the wall at 120.5 M requests/s: 399.2 W in all, CPUs 255 W, four NICs 62 W, rest 82 W.
         "wall_power_w": 399.2, "cpu_power_w": 255.0, "nic_power_w": 62.0},
}
PAPER_ITEMS = 192 << 20   # the paper's Tiny data set (kvs-workload.md): 192 Mi items
P95_ROWS = (12, 24)   # rows compared with the p95 bound measured at 120 M requests/s
P95_BOUND_US = 100.0  # "round-trip p95 below 100 us" at 120 M requests/s (24 cores)

# What the miss-rate rows count. The published rates do not say which definition they use, so two are compared:
# the demand rates (misses of the cores' own loads, stores, fetches and page walks per lookup by them), and for the
# L1D also Linux perf's generic L1-dcache-load-misses / L1-dcache-loads, which on Sandy Bridge and Ivy Bridge are
# L1D.REPLACEMENT (every line filled into the L1D: demand misses, software- and hardware-prefetch fills) over
# MEM_UOP_RETIRED.LOADS (the kernel's snb_hw_cache_event_ids): here the L1D's misses plus its prefetchers' fills
# per load. The "+ prefetches" rows are every lookup of the cache (the L1D's include software prefetches, which
# MICA issues several per request; the L2's also the L1D hardware prefetchers' requests), not compared.
MISS_RATES_NOTE = ("Miss rates compared: demand (misses per lookup of the cores' loads, stores, fetches, page walks) "
                   "and, for the L1D, perf's L1-dcache-load-misses/-loads (L1D.REPLACEMENT per retired load: every "
                   "fill incl. prefetches); '+ prefetches' rows (every lookup) are not compared.")

METRICS = [
    ("throughput_mrps", "throughput (M req/s)"),
    ("loss", "loss (fraction of frames dropped)"),
    ("ipc", "IPC per core"),
    ("rx_batch", "RX batch (packets per non-empty poll)"),
    ("l1d_mpki", "L1D MPKI"),
    ("l2_mpki", "L2 MPKI"),
    ("llc_mpki", "LLC MPKI"),
    ("l1d_miss_rate", "L1D miss rate (demand)"),
    ("l2_miss_rate", "L2 miss rate (demand)"),
    ("l1d_fills_per_load", "L1D fills per load (perf's definition)"),
    ("l1d_miss_rate_all", "L1D miss rate (+ sw prefetches)"),
    ("l2_miss_rate_all", "L2 miss rate (+ all prefetches)"),
    ("llc_miss_rate", "LLC miss rate"),
    ("mem_read_gbs", "memory read (GB/s)"),
    ("mem_write_gbs", "memory write (GB/s)"),
    ("net_rx_gbps", "network RX (Gb/s, wire)"),
    ("net_tx_gbps", "network TX (Gb/s, wire)"),
    ("p95_us", "p95 round trip (us)"),
    ("ddio_core_hit", "packet reads hitting the LLC (DDIO)"),
    ("cpu_power_w", "CPUs (W: model + parts it leaves out)"),
    ("nic_power_w", "NIC chips (W)"),
    ("dram_power_w", "DRAM devices (W)"),
    ("wall_power_w", "wall (W: CPUs + NICs + DRAM only)"),
]


def ports_for(cores: int) -> int:
    return 1 if cores <= 3 else (cores + 1) // 2


def sockets_in(stats: dict[str, float]) -> int:
    """How many sockets a run's statistics describe (system.socket0., system.socket1., ...)."""
    n = 0
    while any(k.startswith(socket_path(n) + ".") for k in stats):
        n += 1
    return max(n, 1)


def figures(r: RunResult, harts: int) -> dict[str, float]:
    s = r.stats
    sockets = range(sockets_in(s))

    def mean(name: str) -> float:
        """Over every core of every socket (a core's number may restart on each socket or run on: both found)."""
        vals = [s[f"{core_path(k, i)}.{name}"] for k in sockets for i in range(harts)
                if f"{core_path(k, i)}.{name}" in s]
        if not vals:
            raise KeyError(f"no core of the run reports {name!r}: a missing counter is an error, not a figure")
        return sum(vals) / len(vals)

    def mean_ratio(*names: str, per: str, absent_if_off: str = "") -> float:
        """Over every core: the sum of counters `names` per counter `per`. A missing counter is an error, except
        `absent_if_off` (a prefetcher's, absent where the cache has none: no prefetch fills)."""
        cores = [core_path(k, i) for k in sockets for i in range(harts) if f"{core_path(k, i)}.{per}" in s]

        def count(c: str, n: str) -> float:
            return s.get(f"{c}.{n}", 0.0) if n == absent_if_off else s[f"{c}.{n}"]
        vals = [sum(count(c, n) for n in names) / s[f"{c}.{per}"] for c in cores if s[f"{c}.{per}"]]
        return sum(vals) / len(vals) if vals else float("nan")

    def socket_mean(name: str) -> float:
        vals = [s[f"{socket_path(k)}.{name}"] for k in sockets if f"{socket_path(k)}.{name}" in s]
        return sum(vals) / len(vals) if vals else float("nan")

    def socket_sum(name: str) -> float:
        return sum(s.get(f"{socket_path(k)}.{name}", 0.0) for k in sockets)

    # Every NIC's queues and ports (system.nic{K}.queue{Q}., system.nic{K}.port{P}.).
    queues = stats_paths.NIC_QUEUE.instances(s, "rx_batches")
    batches = sum(s[stats_paths.NIC_QUEUE.stat(*q, "rx_batches")] for q in queues)
    batch = (sum(s[stats_paths.NIC_QUEUE.stat(*q, "rx_batches")] * s[stats_paths.NIC_QUEUE.stat(*q, "rx_batch_mean")]
                 for q in queues) / batches) if batches else 0.0
    hits, misses = socket_sum("ddio.core_read_hits"), socket_sum("ddio.core_read_misses")
    if not hits + misses:      # several sockets share one memory system: its DDIO counters are the system's
        ddio = stats_paths.SYSTEM_DDIO
        hits, misses = s.get(ddio.stat("core_read_hits"), 0.0), s.get(ddio.stat("core_read_misses"), 0.0)
    return {
        "throughput_mrps": s["client.throughput_mrps"],
        "loss": s["client.loss"],
        "ipc": mean("ipc"),
        "rx_batch": batch,
        "l1d_mpki": mean("l1d.mpki"),
        "l2_mpki": mean("l2.mpki"),
        "llc_mpki": socket_mean("llc.mpki"),
        "l1d_miss_rate": mean("l1d.demand_miss_rate"),
        "l2_miss_rate": mean("l2.demand_miss_rate"),
        "l1d_fills_per_load": mean_ratio("l1d.misses", "l1d.prefetcher.issued", per="loads",
                                         absent_if_off="l1d.prefetcher.issued"),
        "l1d_miss_rate_all": mean("l1d.miss_rate"),
        "l2_miss_rate_all": mean("l2.miss_rate"),
        "llc_miss_rate": socket_mean("llc.miss_rate"),
        "mem_read_gbs": socket_sum("mem.read_bw") / 1e9,
        "mem_write_gbs": socket_sum("mem.write_bw") / 1e9,
        "net_rx_gbps": sum(stats_paths.NIC_PORT.values(s, "rx_wire_gbps")),
        "net_tx_gbps": sum(stats_paths.NIC_PORT.values(s, "tx_wire_gbps")),
        "p95_us": s.get("client.latency.p95", 0.0) / 1e3,
        "ddio_core_hit": hits / (hits + misses) if hits + misses else float("nan"),
    }


def power_figures(r: RunResult, system) -> dict[str, float]:
    """The run priced by the power model (power.price_run, every socket): the CPUs as power/unmodelled.py adds up a
    socket beside the measurement (the model's die plus turbo, supply, clock grid, DDR I/O, QPI ends and regulator
    losses), the NIC chips and the DRAM devices; the wall figure is their sum (fans, disks, board and the supply's
    losses are not modelled: the measurement's "rest")."""
    import power
    from power import unmodelled

    priced = power.price_run(r.stats, system.to_dict())
    sockets = priced.sockets if isinstance(priced, power.report.SystemResult) else [priced]
    cpu = sum(part.watts for res in sockets for part in unmodelled.parts(res) if part.in_total)

    def off_die(cls: str) -> float:
        return sum(float(res.structures.loc[res.structures["class"] == cls, "runtime_power_W"].sum())
                   for res in sockets)

    nic, dram = off_die("nic"), off_die("dram")
    return {"cpu_power_w": cpu, "nic_power_w": nic, "dram_power_w": dram, "wall_power_w": cpu + nic + dram}


def save(folder: pathlib.Path, r: RunResult, system) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "stats.json").write_text(json.dumps(r.stats, indent=0, sort_keys=True))
    (folder / "config.json").write_text(json.dumps(system.to_dict(), indent=0, sort_keys=True))


def items_note(items: int) -> str:
    """The data set against the paper's, said in every output."""
    if items >= PAPER_ITEMS:
        return f"{items:,} items (the paper's Tiny data set)"
    return (f"{items:,} items = 1/{PAPER_ITEMS / items:.4g} of the paper's 192 Mi Tiny set (REDUCED: this host's "
            "memory cannot hold 192 Mi; memory bandwidth and LLC misses are expected to be low)")


def fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if v != v:
        return "n/a"
    return f"{v:.3f}" if abs(v) < 100 else f"{v:.1f}"


def print_point(title: str, fig: dict[str, float], pub: dict[str, float], note: str) -> None:
    print(f"\n== {title}  ({note})")
    print(f"   {'metric':<40}{'simulated':>12}{'published':>12}{'error':>10}")
    for key, label in METRICS:
        sim = fig.get(key)
        ref = pub.get(key)
        err = ""
        if ref is not None and sim is not None and ref != 0:
            err = f"{(sim - ref) / ref * 100:+.1f}%"
        ref_text = fmt(ref)
        if key == "p95_us" and pub.get("p95_bound"):
            ref_text = f"<{P95_BOUND_US:.0f}"
            err = "ok" if sim is not None and sim < P95_BOUND_US else "ABOVE"
        print(f"   {label:<40}{fmt(sim):>12}{ref_text:>12}{err:>10}")


def steady(system):
    """`system` measured in steady state: after the load, a warm-up of the measured mix (sized_warmup_requests: as
    many requests as items, at most 400,000), not counted. The load leaves the LLC full of the log lines it just
    wrote; a measured phase straight after it (a few thousand requests, under a millisecond) spends a third of its
    memory traffic writing them back, where the measured server had been serving its mix for much longer."""
    system.client.warmup_after_load = True
    system.client.warmup_requests = sized_warmup_requests(system)
    return system


def xeon_factory(cores: int, items: int, requests_per_core: int):
    """offered load -> the Xeon system with `cores` cores, in steady state: one socket up to 12, else the
    dual-socket server with half the cores on each socket (two cores per port)."""
    per_socket = xeon_e5_2697v2_socket.CORES_PER_SOCKET
    if cores <= per_socket:
        return lambda rate: steady(xeon_e5_2697v2_socket.system(cores=cores, ports=ports_for(cores), items=items,
                                                                requests=requests_per_core * cores,
                                                                offered_mpps=rate))
    if cores % 2 or cores > 2 * per_socket:
        raise SystemExit(f"--cores {cores}: beyond one socket's {per_socket} the dual-socket server takes an even "
                         f"count up to {2 * per_socket}")
    if DUAL not in configs.available():
        raise SystemExit(f"--cores {cores}: configs/{DUAL}.py is not in this checkout")
    dual = configs.load(DUAL)
    return lambda rate: steady(dual.system(cores_per_socket=cores // 2, items=items,
                                           requests=requests_per_core * cores, offered_mpps=rate))


def run_point(make, harts: int, search: bool, line_mpps: float):
    """(the run, the system it simulated, how the operating point was chosen)."""
    if not search:
        system = make(line_mpps)
        return simulate(system), system, f"open loop at {line_mpps:.2f} M frames/s per port (line rate)"
    res = capacity.capacity(make, high=line_mpps)
    if res.best is None:
        p = min(res.probes, key=lambda p: p.loss)
        return (p.result, make(p.offered_mpps),
                f"no probe below 1% loss; least loss at {p.offered_mpps:.2f} M frames/s per port")
    return (res.best.result, make(res.best.offered_mpps),
            f"highest offered load with < 1% loss: {res.best.offered_mpps:.2f} M frames/s per port")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cores", default="1,2,3,4,8,12" + (",24" if DUAL in configs.available() else ""),
                        help="Xeon core counts (comma separated; 24 = the dual-socket server)")
    parser.add_argument("--requests-per-core", type=int, default=3000, help="measured requests per core")
    parser.add_argument("--items", type=int, default=1 << 16, help="items in the data set")
    parser.add_argument("--search", action="store_true", help="find the highest rate with < 1%% loss per point")
    parser.add_argument("--no-target", action="store_true", help="skip the billion-RPS target socket run")
    parser.add_argument("--target-cores", type=int, default=60, help="cores of the target socket run")
    parser.add_argument("--save", metavar="DIR", help="write each point's statistics and configuration to "
                        "DIR/<cores>/stats.json and config.json (to price or inspect again without re-running)")
    opts = parser.parse_args(argv)
    started = time.perf_counter()
    print("STANDARD workload (tiny 8/8-byte items, uniform, 95% GET), EREW, detailed timing of the measured phase.")
    print(f"Data set: {items_note(opts.items)}.")
    print(MISS_RATES_NOTE)
    for cores in [int(c) for c in opts.cores.split(",") if c]:
        ports = ports_for(cores)
        make = xeon_factory(cores, opts.items, opts.requests_per_core)

        line = capacity.line_rate_mpps(make(1.0))
        t = time.perf_counter()
        r, system, how = run_point(make, cores, opts.search, line)
        if opts.save:
            save(pathlib.Path(opts.save) / str(cores), r, system)
        pub = dict(PUBLISHED.get(cores, {}))
        if cores in P95_ROWS:
            pub["p95_bound"] = 1.0
        where = {4: "published: 2 sockets, 2 cores per port", 12: "published: half of 24 cores on 2 sockets",
                 24: "2 sockets of 12 cores, 6 ports each, as published"}
        note = f"{how}; {time.perf_counter() - t:.1f} s host; {opts.items:,} items"
        if opts.items < PAPER_ITEMS:
            note += " (reduced data set)"
        note += f"; measured after a {system.client.warmup_requests:,}-request warm-up of the mix"
        if cores in where:
            note += f"; {where[cores]}"
        what = "dual-socket server" if cores > xeon_e5_2697v2_socket.CORES_PER_SOCKET else "socket"
        print_point(f"Xeon E5-2697 v2 {what}, {cores} core(s), {ports} x 10 GbE",
                    figures(r, cores) | power_figures(r, system), pub, note)
    if not opts.no_target:
        cores = opts.target_cores

        def make_t(rate):
            return brps_target_socket.system(cores=cores, items=opts.items,
                                             requests=opts.requests_per_core * cores // 6, offered_mpps=rate)

        line = capacity.line_rate_mpps(make_t(1.0))
        t = time.perf_counter()
        r, system, how = run_point(make_t, cores, opts.search, line)
        print_point(f"billion-RPS target socket, {cores} cores, 3 x 100 GbE",
                    figures(r, cores) | power_figures(r, system), {},
                    f"{how}; {time.perf_counter() - t:.1f} s host; no published measurement")
    print(f"\ntotal host time {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
