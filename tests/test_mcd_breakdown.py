"""The time breakdown of a GET on a dense-stack core, measured from the simulation: the memcached-class server's
bench mode (workloads/mcd/main_riscv.c) times N GETs three ways between stats dumps: the key hash alone, the guest
network stack alone (parse with checksums, connection lookup, copy into the socket buffer, reply frame with
checksums; over TCP also the connection's state machine and the reply's copy into the send buffer), and the whole
request path; memcached's own share (binary protocol, store lookup, LRU update, the value's copy) is the whole
minus the other two.

`python tests/test_mcd_breakdown.py [GETS]` prints the table over UDP and TCP for the A7 at 1 GHz and the A15 at
1 and 1.5 GHz of configs/mercury.py (the measurement is drivers.studies.dense.breakdown).
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

from drivers.studies.dense import breakdown

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_get_breakdown_is_measured(engine):
    build = subprocess.run(["make", "-s", "-C", str(ROOT / "workloads" / "mcd"), "riscv"], capture_output=True,
                           text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    b = breakdown(500)
    for name in ("hash", "network stack", "whole GET", "memcached"):
        assert b[name]["ns"] > 0 and b[name]["insts"] > 0, b
    # The whole path does everything the network phase does and more.
    assert b["whole GET"]["insts"] > b["network stack"]["insts"] + b["hash"]["insts"], b


@pytest.mark.slow
def test_get_breakdown_over_tcp_costs_the_network_stack_more(engine):
    """Over TCP the same GETs take more of the network stack (the connection's state machine, two socket-buffer
    copies, ACK bookkeeping) than over UDP, and the same memcached and hashing work (equal within 15%)."""
    build = subprocess.run(["make", "-s", "-C", str(ROOT / "workloads" / "mcd"), "riscv"], capture_output=True,
                           text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    udp, tcp = breakdown(300), breakdown(300, transport="tcp")
    assert tcp["whole GET"]["insts"] > tcp["network stack"]["insts"] + tcp["hash"]["insts"], tcp
    assert tcp["network stack"]["insts"] > udp["network stack"]["insts"], (udp, tcp)
    assert tcp["hash"]["insts"] == udp["hash"]["insts"], (udp, tcp)
    assert abs(tcp["memcached"]["insts"] / udp["memcached"]["insts"] - 1) < 0.15, (udp, tcp)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    for transport in ("udp", "tcp"):
        for kind, clock in (("a7", None), ("a15", None), ("a15", "1.5GHz")):
            b = breakdown(n, kind, clock, transport=transport)
            total = b["whole GET"]["ns"]
            print(f"{transport} {kind} {clock or '1GHz'}: " + ", ".join(
                f"{k} {v['ns']:.0f} ns ({100 * v['ns'] / total:.0f}%, {v['insts']:.0f} insts)"
                for k, v in b.items() if k != "whole GET") + f"; whole GET {total:.0f} ns, "
                f"{b['whole GET']['insts']:.0f} insts")
