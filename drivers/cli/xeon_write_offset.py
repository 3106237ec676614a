#!/usr/bin/env python3
"""Which kind of writer the Xeon model lacks, tested against both published memory-write points (4 and 24 cores).

    sim-scripts/xeon_write_offset.py 4=5.114 24=26.685 [--aging 4=0.52 --aging 24=-3.46] [--layout 4=-0.72]

Each CORES=BYTES is the model's memory write per request at that published point (validate_xeon.py's row "memory
write per request (bytes)"); `--aging CORES=BYTES` adds what MICA's log aging would change on a long-running server
(xeon_memory_writes_4c.txt: the replay's re-appends a request x their measured cost), `--layout CORES=BYTES` what
the measured point's socket layout changes (xeon_memory_writes_4c_two_sockets.txt). No run: arithmetic on those
figures and the published ones (validate_xeon.PUBLISHED).

The published write bandwidth W at throughput X is modelled as X (w + a) + b, w the model's bytes a request and the
missing writer either a per-request cost a or a rate b that does not follow the requests: a rate per machine (the
OS, the measuring tool: both points ran on the same 2-socket server), per socket, per port or per core. Each kind
is sized from one point and predicts the other; the two points together also fix a and a machine-wide b at once.
A kind that needs more than +-10% at the other point is ruled out by the published pair.
"""

from __future__ import annotations

import argparse

from drivers.cli.validate_xeon import PUBLISHED

# How many of each the measured points used (validation.md: "4 cores, 2 ports (2 sockets)"; "24 cores, 12 ports").
LAYOUT = {4: {"machine": 1, "socket": 2, "port": 2, "core": 4},
          24: {"machine": 1, "socket": 2, "port": 12, "core": 24}}
KINDS = ("request", "machine", "socket", "port", "core")
TOLERANCE = 0.10   # issue 23's acceptance: every Xeon row within +-10%


def _pairs(items: list[str], what: str) -> dict[int, float]:
    out: dict[int, float] = {}
    for item in items:
        cores, sep, value = item.partition("=")
        try:
            c, v = int(cores), float(value)
        except ValueError:
            raise SystemExit(f"{what} {item!r}: give CORES=BYTES, e.g. 4=5.114") from None
        if not sep or c not in LAYOUT:
            raise SystemExit(f"{what} {item!r}: the published write points are at {sorted(LAYOUT)} cores")
        out[c] = v
    return out


def model_bytes(base: dict[int, float], *adjust: dict[int, float]) -> dict[int, float]:
    """The model's bytes a request at each point, with the aging and layout changes added."""
    return {c: w + sum(a.get(c, 0.0) for a in adjust) for c, w in base.items()}


def published(cores: int) -> tuple[float, float]:
    """(throughput in requests/s, memory write in bytes/s) of the published point."""
    p = PUBLISHED[cores]
    return p["throughput_mrps"] * 1e6, p["mem_write_gbs"] * 1e9


def size_from(kind: str, cores: int, w: float) -> float:
    """The missing writer sized so that the point `cores` is met exactly: bytes a request for 'request', else
    bytes/s per machine, socket, port or core."""
    x, wr = published(cores)
    gap = wr - x * w
    return gap / x if kind == "request" else gap / LAYOUT[cores][kind]


def predict(kind: str, amount: float, cores: int, w: float) -> float:
    """The write bandwidth (bytes/s) at point `cores`: the model's w a request at the published throughput, plus
    the missing writer of that kind and amount."""
    x, _ = published(cores)
    return x * (w + amount) if kind == "request" else x * w + amount * LAYOUT[cores][kind]


def joint(w: dict[int, float]) -> tuple[float, float]:
    """The per-request cost a (bytes) and the machine-wide rate b (bytes/s) that meet both points exactly."""
    (x4, w4), (x24, w24) = published(4), published(24)
    a = ((w24 - w4) - (x24 * w[24] - x4 * w[4])) / (x24 - x4)
    return a, w4 - x4 * (w[4] + a)


def report(w: dict[int, float], label: str) -> list[str]:
    lines = [f"{label}: model bytes a request 4 cores {w[4]:.3f}, 24 cores {w[24]:.3f} "
             f"(published {PUBLISHED[4]['mem_write_per_req']:.3f} and {PUBLISHED[24]['mem_write_per_req']:.3f})"]
    lines.append(f"  {'missing writer, per':<10} {'sized at 4 cores':>22} {'24 cores: GB/s':>15} {'error':>8}   verdict")
    for kind in KINDS:
        amount = size_from(kind, 4, w[4])
        pred = predict(kind, amount, 24, w[24])
        err = pred / published(24)[1] - 1
        unit = f"{amount:.3f} B/request" if kind == "request" else f"{amount / 1e9:.4f} GB/s"
        verdict = "fits" if abs(err) <= TOLERANCE else "ruled out"
        lines.append(f"  {kind:<10} {unit:>22} {pred / 1e9:>15.3f} {err:>+8.1%}   {verdict}")
    a, b = joint(w)
    lines.append(f"  both points at once: {a:+.3f} B a request and {b / 1e9:+.4f} GB/s per machine")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", nargs=2, metavar="CORES=BYTES",
                        help="the model's memory write per request at 4 and at 24 cores")
    parser.add_argument("--aging", action="append", default=[], metavar="CORES=BYTES",
                        help="bytes a request the log's aging adds (negative: removes) at that point")
    parser.add_argument("--layout", action="append", default=[], metavar="CORES=BYTES",
                        help="bytes a request the measured socket layout adds (negative: removes) at that point")
    opts = parser.parse_args(argv)
    base = _pairs(opts.model, "model")
    if sorted(base) != sorted(LAYOUT):
        raise SystemExit("model: give the model's bytes a request at both published points, 4=... and 24=...")
    aging, layout = _pairs(opts.aging, "--aging"), _pairs(opts.layout, "--layout")
    out = report(model_bytes(base), "as run (a freshly loaded data set)")
    if aging:
        out += report(model_bytes(base, aging), "with the log's aging")
    if aging and layout:
        out += report(model_bytes(base, aging, layout), "with the log's aging and the measured layout")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
