"""Summarise batch32_repro_s25.py runs (session 26, dram-s26): throughput, loss, p95, and the DRAM's reads, read
latency and queue (read-weighted over all channels) and reversed reads (`reversed_reads`, absent before 0bd0490).

    .venv/bin/python dram_by_arrival_summary_s26.py TAG [TAG ...]      (reads /tmp/b32/TAG/stats.json)"""
import json
import sys


def summary(tag: str) -> str:
    stats = json.load(open(f"/tmp/b32/{tag}/stats.json"))
    s = stats.get("stats", stats)
    ch, reads, lat, queue, reversed_reads = 0, 0.0, 0.0, 0.0, 0.0
    while f"system.socket0.mem.channel{ch}.reads" in s:
        p = f"system.socket0.mem.channel{ch}."
        r = s[p + "reads"]
        reads += r
        lat += r * s[p + "read_latency_avg"]
        queue += r * s[p + "read_queue_latency_avg"]
        reversed_reads += s.get(p + "reversed_reads", float("nan"))
        ch += 1
    return (f"{tag}: thr {s['client.throughput_mrps']:.1f} M req/s loss {s['client.loss']:.3f} "
            f"p95 {s['client.latency.p95'] / 1e3:.1f} us | DRAM {ch} ch reads {reads:.0f} "
            f"lat {lat / reads / 1e3:.0f} ns queue {queue / reads / 1e3:.0f} ns "
            f"reversed {reversed_reads:.0f} ({100 * reversed_reads / reads:.1f}%)")


if __name__ == "__main__":
    for tag in sys.argv[1:]:
        print(summary(tag))
