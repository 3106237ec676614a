"""TX completion by descriptor (DD bits) and by head-pointer write-back (Nic.tx_completion), end to end with the
real KVS server: its driver (workloads/kvs/platform_riscv.c) reads TX_COMPLETION and reclaims TX buffers by DD bits
or by the head the NIC writes to the word it registered. In head-pointer mode the NIC writes no DD bit, so a driver
that kept polling DD would run out of buffers and stop answering (the client would fail the run). The exact
write-back counts and ticks are unit-tested in models/engine/src/nictime.rs and nic.rs."""

from __future__ import annotations

import subprocess

import pytest

from configs import kvs_functional
from models.sim import simulate

from conftest import WORKLOADS

SERVER_ARGS = ("log_mib=8", "buckets=4096", "tx_ring=64")
REQUESTS = 3000
ITEMS = 2048


@pytest.fixture(scope="module")
def kvs_server(engine):
    proc = subprocess.run(["make", "-s", "-C", str(WORKLOADS), "kvs"], capture_output=True, text=True)
    if proc.returncode != 0 or not kvs_functional.KVS_SERVER.is_file():
        pytest.fail(f"building the KVS server failed:\n{proc.stdout}\n{proc.stderr}", pytrace=False)
    return kvs_functional.KVS_SERVER


def run(mode: str, detailed: bool):
    # 3,000 requests through a 64-entry TX ring and 128 + 64 + 64 buffers per queue: every buffer is reclaimed
    # many times over, so a driver that missed completions would stall long before the end.
    s = kvs_functional.system(harts=2, server_args=SERVER_ARGS, items=ITEMS, requests=REQUESTS)
    s.nic.tx_completion = mode
    if detailed:
        s.mode = "detailed"
        s.detailed_start = "roi"
        s.nic.port_gbps = 10.0
        s.client.offered_mpps = 4.0
    return simulate(s)


@pytest.mark.parametrize("detailed", [False, True], ids=["functional", "detailed"])
@pytest.mark.parametrize("mode", ["descriptor", "head_pointer"])
def test_the_kvs_server_answers_every_request_in_both_modes(kvs_server, mode, detailed):
    r = run(mode, detailed)
    s = r.stats
    assert r.stop_reason == "client_done" and r.exit_code in (0, None)
    # Every request of the bulk load (one PUT per item) and of the run was answered and checked.
    assert s["client.requests"] == REQUESTS
    assert s["client.responses_checked"] == ITEMS + REQUESTS
    assert s["client.lost_requests"] == 0
    sent = sum(s[f"system.nic0.queue{q}.tx_frames"] for q in range(2))
    assert sent == s["client.packets"] == REQUESTS
    if detailed:
        # One completion write per TX batch of a queue: a 16-byte descriptor or a 4-byte head, + 24 bytes of TLP.
        tlps = s["system.nic0.pcie.up_tlps.tx_completion"]
        assert 0 < tlps <= sent
        per_tlp = {"descriptor": 16 + 24, "head_pointer": 4 + 24}[mode]
        assert s["system.nic0.pcie.up_bytes.tx_completion"] == per_tlp * tlps


def test_head_pointer_mode_changes_only_the_tx_completion_traffic(kvs_server):
    d, h = run("descriptor", True).stats, run("head_pointer", True).stats
    for kind in ("rx_data", "rx_writeback", "tx_data"):
        assert h[f"system.nic0.pcie.up_tlps.{kind}"] == d[f"system.nic0.pcie.up_tlps.{kind}"] > 0, kind
    assert h["system.nic0.pcie.up_bytes.tx_completion"] < d["system.nic0.pcie.up_bytes.tx_completion"]
