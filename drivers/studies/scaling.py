"""Scaling in sockets: the capacity of the 1-, 2- and 4-socket target under the STANDARD workload (Uniform, 95% GET,
EREW), against linear scaling from one socket, with the statistics that say where it departs: inter-socket link
utilisation and remote memory accesses, each NIC's PCIe link busy time and RX drops, LLC MPKI.

The 2- and 4-socket points are the end-to-end study's Uniform / 95% GET / EREW points (same configuration, same
sweep store: whichever study runs first computes them)."""

from __future__ import annotations

import pathlib
import re

import pandas as pd

from analysis import style

from ..sweep import List, Sweep
from . import common, end_to_end, servers

SOCKETS = (1, 2, 4)


def _sweep(sockets: int, scale: end_to_end.Scale, cores: int = 0,
           conditions: common.Conditions | None = None) -> Sweep:
    name = f"e2e-{sockets}s-{conditions.tag()}" if conditions is not None else ""
    e2e = end_to_end.server_sweeps(sockets, scale, cores, name=name, conditions=conditions)[0]
    return Sweep(e2e.name, e2e.base, List([{"client.popularity": "uniform", "client.get_ratio": 0.95,
                                             "client.mode": "erew"}]), ties=e2e.ties, evaluator=e2e.evaluator,
                 options=e2e.options, share_checkpoint=e2e.share_checkpoint)


def sweeps(full: bool | None = None, conditions: common.Conditions | None = None) -> list[Sweep]:
    c = common.conditions_for(full, conditions)
    scale = end_to_end.scale_of(c)
    return [_sweep(s, scale, conditions=c if c.items is not None else None) for s in SOCKETS if servers.available(s)]


def _mean(stats: dict, pattern: str) -> float:
    rx = re.compile(pattern)
    vals = [v for k, v in stats.items() if rx.fullmatch(k) and v == v]
    return sum(vals) / len(vals) if vals else float("nan")


def _max(stats: dict, pattern: str) -> float:
    rx = re.compile(pattern)
    vals = [v for k, v in stats.items() if rx.fullmatch(k) and v == v]
    return max(vals) if vals else float("nan")


def _sum(stats: dict, pattern: str) -> float:
    rx = re.compile(pattern)
    return sum(v for k, v in stats.items() if rx.fullmatch(k) and v == v)


def limits(stats: dict) -> dict[str, float]:
    """The figures that explain a departure from linear, from a run's statistics (NaN when the run has none)."""
    span_ps = stats.get("client.measured_ns", float("nan")) * 1e3
    reads = _sum(stats, r"system\.socket\d+\.mem\.reads")
    remote = _sum(stats, r"system\.socket\d+\.(mem|numa)\.remote_(reads|accesses)")
    per_core = [v for k, v in stats.items() if re.fullmatch(r"client\.core\d+\.requests", k)]
    return {
        # The busiest core's requests over the mean core's: a short window of uniform keys is uneven, and more so
        # over more cores; the busiest core saturates first.
        "busiest_core_load": max(per_core) / (sum(per_core) / len(per_core)) if per_core and sum(per_core)
        else float("nan"),
        "insts_per_request": stats.get("client.insts_per_request", float("nan")),
        "ipc_mean": _mean(stats, r"system\.socket\d+\.core\d+\.ipc"),
        "rx_batch_mean": _mean(stats, r"system\.nic\d+\.queue\d+\.rx_batch_mean"),
        "link_util_mean": _mean(stats, r"system\.(link|qpi|upi|intersocket)[\w.]*\.utili[sz]ation(_avg)?"),
        "link_util_max": _max(stats, r"system\.(link|qpi|upi|intersocket)[\w.]*\.utili[sz]ation(_max)?"),
        "remote_access_fraction": remote / reads if reads and remote else float("nan"),
        # Data the links carried, all directions (lines moved between sockets: remote reads, write-backs, DMA).
        "link_payload_gbs": _sum(stats, r"system\.link\d+_\d+\.payload_bw") / 1e9,
        "pcie_up_busy_max": _max(stats, r"system\.nic\d+\.pcie\.up_busy_ps") / span_ps if span_ps else float("nan"),
        "pcie_down_busy_max": _max(stats, r"system\.nic\d+\.pcie\.down_busy_ps") / span_ps
        if span_ps else float("nan"),
        "rx_drops": _sum(stats, r"system\.nic\d+\.(port|queue)\d+\.rx_drop\w*"),
        "mesh_util_max": _max(stats, r"system\.socket\d+\.noc\.link_utilization_max"),
        "llc_mpki_mean": _mean(stats, r"system\.socket\d+\.llc\.mpki"),
    }


def frame(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    rows = []
    for name, table in tables.items():
        for _, row in table[table.status == "ok"].iterrows():
            # The store is shared with the end-to-end study: its other workloads are not this study's.
            if (row.get("param.client.popularity"), row.get("param.client.get_ratio"),
                    row.get("param.client.mode")) != ("uniform", 0.95, "erew"):
                continue
            f = common.figures_of(row)
            stats = {k[5:]: v for k, v in row.items() if isinstance(k, str) and k.startswith("stat.")}
            harts = int(row.get("cfg.harts", 0))
            rows.append({"sockets": max(1, round(harts / servers.CORES_PER_SOCKET)), "cores": harts,
                         "throughput_mrps": end_to_end.sustained_mrps(stats), "answered_mrps": f["throughput_mrps"],
                         "p95_us": f["p95_us"],
                         "offered_mpps_per_port": stats.get("capacity.mpps_per_port", float("nan")),
                         **limits(stats), "sweep": name})
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df = df.sort_values("sockets").reset_index(drop=True)
    one = df[df.sockets == 1].throughput_mrps
    base = float(one.iloc[0]) if len(one) else float("nan")
    df["linear_mrps"] = base * df.sockets
    df["efficiency"] = df.throughput_mrps / df.linear_mrps
    return df


def why(df: pd.DataFrame) -> list[str]:
    """What the statistics say about the departure from linear (read from the table, not assumed)."""
    if len(df) < 2 or df.sockets.min() != 1:
        return []
    one, most = df.iloc[0], df.iloc[-1]
    return [f"{int(most.sockets)} sockets reach {most.efficiency:.0%} of linear. Inter-socket links at most "
            f"{df.link_util_max.max():.1%} busy ({df.link_payload_gbs.max():.2f} GB/s of data across all links), "
            f"NIC PCIe links at most {df.pcie_up_busy_max.max():.0%} busy, no RX drops at capacity: neither is the "
            f"limit. What changes: the busiest core's share of the requests ({one.busiest_core_load:.2f} x the mean "
            f"on 1 socket, {most.busiest_core_load:.2f} on {int(most.sockets)}: the busiest core saturates first, "
            "and the maximum over more cores of an uneven short window is higher), and instructions per request "
            f"({one.insts_per_request:,.0f} -> {most.insts_per_request:,.0f}, with RX batches of "
            f"{one.rx_batch_mean:.2f} -> {most.rx_batch_mean:.2f} packets: a lower load per port batches less)."]


def plot(df: pd.DataFrame, path: pathlib.Path, caption: str = "") -> None:
    plt = style.pyplot()

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(df.sockets, df.throughput_mrps / 1e3, marker="o", label="simulated")
    ax.plot(df.sockets, df.linear_mrps / 1e3, linestyle="--", color="grey", label="linear from 1 socket")
    ax.set_xticks(list(df.sockets))
    ax.set_xlabel("sockets (60 cores, 3 x 100 GbE each)")
    style.rate_axis(ax, "throughput (billion requests/s)")
    style.throughput_references(ax, scale=1e-3)
    ax.set_title("Uniform, 95% GET, EREW")
    style.legend_outside(ax)
    style.save(fig, path, caption)


def make(tables, outdir: pathlib.Path, full: bool | None = None,
         conditions: common.Conditions | None = None) -> list[pathlib.Path]:
    c = common.conditions_for(full, conditions)
    scale = end_to_end.scale_of(c)
    df = frame(tables)
    if not df.empty:
        df["conditions"] = c.text(scale.items if c.items is not None else None)
    csv, png = outdir / "scaling.csv", outdir / "scaling.png"
    df.to_csv(csv, index=False)
    paths = [csv]
    if not df.empty:
        plot(df, png, style.conditions(
            full=None, items=scale.items, window=f"{scale.name} scale: {scale.requests_per_core:,} measured requests "
            f"per core per probe, capacity to {scale.resolution:.0%}, whole servers", extra=df["conditions"].iloc[0]))
        paths.append(png)
    cols = ["sockets", "throughput_mrps", "linear_mrps", "efficiency", "p95_us", "busiest_core_load",
            "insts_per_request", "ipc_mean", "rx_batch_mean", "link_util_mean", "link_util_max",
            "link_payload_gbs", "remote_access_fraction", "pcie_up_busy_max", "pcie_down_busy_max", "rx_drops",
            "mesh_util_max", "llc_mpki_mean"]
    report = common.write_report(
        outdir / "scaling.md", "Throughput of 1, 2 and 4 sockets (Uniform, 95% GET, EREW)",
        __doc__.split("\n\n")[0].replace("\n", " "),
        [f"servers: {', '.join(f'configs/{servers.SERVER_CONFIGS[s]}.py' for s in SOCKETS)}",
         f"scale: {scale.name} ({scale.requests_per_core} measured requests per core per probe, "
         f"{scale.resolution:.0%} resolution)"],
        common.markdown_table(df[[c for c in cols if c in df]]) if not df.empty else "(no points)",
        [png.name] if not df.empty else [],
        why(df) + ["pcie_*_busy_max: the busiest NIC link's busy time over the measured span; link_util: the inter-socket "
         "links; remote_access_fraction: memory reads served by another socket's memory"])
    return paths + [report]
