"""The time breakdown of a GET on a dense-stack core, measured from the simulation: the memcached-class server's
bench mode (workloads/mcd/main_riscv.c) times N GETs three ways between stats dumps: the key hash alone, the guest
network stack alone (parse with checksums, connection lookup, copy into the socket buffer, reply frame with
checksums), and the whole request path; memcached's own share (binary protocol, store lookup, LRU update, the
value's copy) is the whole minus the other two.

`python tests/test_mcd_breakdown.py [GETS]` prints the table for the A7 and A15 cores of configs/mercury.py.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import configs  # noqa: E402
from models.sim import simulate  # noqa: E402

PHASES = ("hash", "network stack", "whole GET")


def breakdown(gets: int, core_kind: str = "a7", clock: str | None = None, l2: bool = False,
              outdir: pathlib.Path | None = None) -> dict[str, dict[str, float]]:
    """Per GET: simulated ns and instructions of each phase, and memcached's share (whole - network - hash)."""
    build = subprocess.run(["make", "-s", "-C", str(ROOT / "workloads" / "mcd"), "riscv"], capture_output=True,
                           text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    system = configs.load("mercury").system(cores=1, core_kind=core_kind, clock=clock, l2=l2, store_mem="8MiB")
    system.workload.argv = ["bench=%d" % gets, "buckets=12"]
    system.detailed_start = "roi"
    system.nic.enabled = False
    system.client.enabled = False                # the bench makes its own frames
    result = simulate(system, outdir=outdir or pathlib.Path(tempfile.mkdtemp()))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert f"mcd bench: {gets} GETs per phase, {gets} hits".encode() in result.stdout, result.stdout
    dumps = result.stat_dumps
    assert len(dumps) == 4, f"expected 4 stats dumps, got {len(dumps)}"
    out: dict[str, dict[str, float]] = {}
    for i, name in enumerate(PHASES):
        (t0, s0), (t1, s1) = dumps[i], dumps[i + 1]
        out[name] = {"ns": (t1 - t0) / 1000 / gets,
                     "insts": (s1["system.hart0.insts"] - s0["system.hart0.insts"]) / gets}
    whole, net, hsh = out["whole GET"], out["network stack"], out["hash"]
    out["memcached"] = {k: whole[k] - net[k] - hsh[k] for k in ("ns", "insts")}
    return out


@pytest.mark.slow
def test_get_breakdown_is_measured(engine):
    b = breakdown(500)
    for name in ("hash", "network stack", "whole GET", "memcached"):
        assert b[name]["ns"] > 0 and b[name]["insts"] > 0, b
    # The whole path does everything the network phase does and more.
    assert b["whole GET"]["insts"] > b["network stack"]["insts"] + b["hash"]["insts"], b


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    for kind, clock in (("a7", None), ("a15", None), ("a15", "1.5GHz")):
        b = breakdown(n, kind, clock)
        total = b["whole GET"]["ns"]
        print(f"{kind} {clock or '1GHz'}: " + ", ".join(
            f"{k} {v['ns']:.0f} ns ({100 * v['ns'] / total:.0f}%, {v['insts']:.0f} insts)"
            for k, v in b.items() if k != "whole GET") + f"; whole GET {total:.0f} ns, {b['whole GET']['insts']:.0f} "
            "insts")
