"""Study 5, client-side batching: throughput, network bandwidth and p95 latency vs requests per packet (1 to 32)
(validation.md), with an analytical client-side batching delay beside the simulated latency.

The delay model. The paper's Equation 1 is not in the project's spec files, so we state the model we use: with
EREW steering every request in a packet goes to the same partition, so a client fills a packet of N requests from
one partition's request stream. If that stream is Poisson at rate lambda_q (the server's throughput over its
partitions), the k-th request of a packet waits for the N - k after it, and the mean wait is (N - 1) / (2 lambda_q);
the last of them waits (N - 1) / lambda_q. The simulated client sends packed frames without waiting to fill them
(its latency is send to receive of the frame), so the model's delay adds to the simulated round trip."""

from __future__ import annotations

import pathlib

import pandas as pd

from analysis import style

from ..sweep import CAPACITY_EVALUATOR, Base, Sweep, Zip
from . import common

PER_PACKET = [1, 2, 4, 8, 16, 32]
FRAMES_PER_CORE = 250   # measured frames per core per probe at any batch size (so a run is long enough)


KEY_PER_PACKET = [1, 4, 32]   # no packing, MICA-like packing (assumed: 4) and the most the study packs


def _sweep(name: str, cores: int, per_packet: list[int], items: int | None = None) -> Sweep:
    base = Base("drivers.studies.common:target", cores=cores) if items is None else \
        Base("drivers.studies.common:target", cores=cores, items=items,
             warmup_requests=common.WARMUP_REQUESTS_PER_CORE * cores)
    return Sweep(name, base,
                 Zip({"client.requests_per_packet": per_packet,
                      "client.requests": [max(common.REQUESTS_PER_CORE, FRAMES_PER_CORE * n) * cores
                                          for n in per_packet]}),
                 evaluator=CAPACITY_EVALUATOR, options={"resolution": common.CAPACITY_RESOLUTION,
                                                        **({} if items is None else {"steady": True})},
                 share_checkpoint=items is not None)   # as core_weight._sweep


def sweeps(full: bool | None = None, conditions: common.Conditions | None = None) -> list[Sweep]:
    c = common.conditions_for(full, conditions)
    if c.items is None:          # the study's own data set (before issue 28)
        return [_sweep(f"batching-{c.cores}c", c.cores, PER_PACKET)]
    return [_sweep(f"batching-{c.tag()}", c.cores, PER_PACKET if c.all_points else KEY_PER_PACKET, c.items)]


def compare_sweep() -> Sweep:
    return _sweep(f"batching-{common.FULL_CORES}c-compare", common.FULL_CORES, [1, 4, 32])


def batching_delay_us(per_packet: float, partition_rate_mrps: float) -> tuple[float, float]:
    """(mean, worst) client-side wait to fill a packet of `per_packet` requests from one partition's stream of
    `partition_rate_mrps` M requests/s (see the module doc), in microseconds."""
    if partition_rate_mrps <= 0:
        return float("nan"), float("nan")
    return (per_packet - 1) / (2 * partition_rate_mrps), (per_packet - 1) / partition_rate_mrps


def frame(table: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, row in table[table.status == "ok"].iterrows():
        f = common.figures_of(row)
        n = row["param.client.requests_per_packet"]
        mean, worst = batching_delay_us(n, f["throughput_mrps"] / f["cores"])
        rows.append({"requests_per_packet": n, **f, "model_wait_mean_us": mean, "model_wait_max_us": worst,
                     "p95_with_model_wait_us": f["p95_us"] + mean,
                     "net_gbps": f["net_rx_gbps"] + f["net_tx_gbps"]})
    return pd.DataFrame(rows).sort_values("requests_per_packet").reset_index(drop=True)


def plot(df: pd.DataFrame, path: pathlib.Path, caption: str = "") -> None:
    plt = style.pyplot()

    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    x = df.requests_per_packet
    axes[0].plot(x, df.throughput_mrps, marker="o", label="capacity (< 1% loss)")
    if "throughput_ci_mrps" in df and df.throughput_ci_mrps.notna().any():
        style.interval(axes[0], x, df.throughput_mrps, df.throughput_mrps + df.throughput_ci_mrps,
                       df.throughput_mrps - df.throughput_ci_mrps, label=style.STEADY_INTERVAL)
    elif "throughput_upper_mrps" in df:
        style.interval(axes[0], x, df.throughput_mrps, df.throughput_upper_mrps)
    style.rate_axis(axes[0], "throughput (M requests/s)")
    axes[1].plot(x, df.net_rx_gbps, marker="o", label="RX (requests)")
    axes[1].plot(x, df.net_tx_gbps, marker="s", label="TX (responses)")
    style.rate_axis(axes[1], "network bandwidth (Gb/s, on the wire)")
    axes[2].plot(x, df.p95_us, marker="o", label="p95 round trip (simulated)")
    axes[2].plot(x, df.p95_with_model_wait_us, marker="s", linestyle="--",
                 label="+ mean client batching wait (model)")
    style.rate_axis(axes[2], "latency (us)")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xticks(list(x), [str(v) for v in x])
        ax.set_xlabel("requests per packet")
        style.legend_outside(ax, loc="upper left", bbox_to_anchor=(0.0, -0.18))
    style.save(fig, path, caption)


def headline(df: pd.DataFrame) -> dict[str, float]:
    """Throughput with N requests per packet over one per packet (NaN where a point was not run)."""
    t = df.set_index("requests_per_packet").throughput_mrps.to_dict()
    return {f"1 -> {n} requests per packet": t[n] / t[1] if n in t and 1 in t else float("nan")
            for n in PER_PACKET[1:]}


def make(tables, outdir: pathlib.Path, full: bool | None = None,
         conditions: common.Conditions | None = None) -> list[pathlib.Path]:
    c = common.conditions_for(full, conditions)
    cores = c.cores
    df = frame(next(iter(tables.values())))
    df["conditions"] = c.text(int(df["items"].iloc[0]) if len(df) and c.items is not None else None)
    csv, png = outdir / "batching.csv", outdir / "batching.png"
    df.to_csv(csv, index=False)
    plot(df, png, style.conditions_of(df, full=c.full, cores=cores, extra=df["conditions"].iloc[0] if len(df) else ""))
    cols = ["requests_per_packet", "throughput_mrps", "net_rx_gbps", "net_tx_gbps", "p50_us", "p95_us",
            "model_wait_mean_us", "model_wait_max_us", "rx_batch", "ipc"]
    heads = headline(df)
    report = common.write_report(
        outdir / "batching.md", "Client-side batching", __doc__.replace("\n", " ").replace("  ", "\n\n"),
        [f"conditions: {df['conditions'].iloc[0] if len(df) else c.text()}", f"scale: {common.scale_text(cores)}",
         "client.requests_per_packet = " + ", ".join(map(str, PER_PACKET)),
         f"client.requests = max({common.REQUESTS_PER_CORE}, {FRAMES_PER_CORE} x requests per packet) x cores",
         f"throughput: capacity search to {common.CAPACITY_RESOLUTION:.0%} resolution (frames/s), reported "
         "in requests/s at that load; latency and bandwidth are the capacity point's"],
        "### Headline ratios (throughput)\n\n" +
        common.markdown_table(pd.DataFrame({"change": list(heads), "ratio": list(heads.values())})) +
        "\n\n### Table\n\n" + common.markdown_table(df[common.with_confirmation(df, cols)]), [png.name],
        common.confirmation_notes(df))
    return [csv, png, report]
