"""TX completion by descriptor (DD bits), by head-pointer write-back and by report status (DD only where the driver
set RS) (Nic.tx_completion), end to end with the real KVS server: its driver (workloads/kvs/platform_riscv.c) reads
TX_COMPLETION and reclaims TX buffers by DD bits, by the head the NIC writes to the word it registered, or in groups
ending in an RS descriptor. In head-pointer mode the NIC writes no DD bit, in report-status mode only every 16th
here, so a driver that kept polling each DD would run out of buffers and stop answering (the client would fail the
run). The exact write-back counts and ticks are unit-tested in models/engine/src/nictime.rs and nic.rs."""

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


def run(mode: str, detailed: bool, extra_args: tuple[str, ...] = ()):
    # 3,000 requests through a 64-entry TX ring and 128 + 64 + 32 buffers per queue: every buffer is reclaimed
    # many times over, so a driver that missed completions would stall long before the end.
    s = kvs_functional.system(harts=2, server_args=SERVER_ARGS + extra_args, items=ITEMS, requests=REQUESTS)
    s.nic.tx_completion = mode
    if detailed:
        s.mode = "detailed"
        s.detailed_start = "roi"
        s.nic.port_gbps = 10.0
        s.client.offered_mpps = 4.0
    return simulate(s)


@pytest.mark.parametrize("detailed", [False, True], ids=["functional", "detailed"])
@pytest.mark.parametrize("mode", ["descriptor", "head_pointer", "report_status"])
def test_the_kvs_server_answers_every_request_in_every_mode(kvs_server, mode, detailed):
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
        # One completion write per TX batch of a queue (a 16-byte descriptor or a 4-byte head), or per RS
        # descriptor (every 16th: a quarter of each queue's 64-entry ring), each + 24 bytes of TLP (4-DW header and framing).
        tlps = s["system.nic0.pcie.up_tlps.tx_completion"]
        assert 0 < tlps <= sent
        if mode == "report_status":
            assert abs(tlps - sent / 16) <= 2, (tlps, sent)
        per_tlp = {"descriptor": 16 + 24, "head_pointer": 4 + 24, "report_status": 16 + 24}[mode]
        assert s["system.nic0.pcie.up_bytes.tx_completion"] == per_tlp * tlps


def test_the_modes_change_only_the_tx_completion_traffic(kvs_server):
    d, h, r = (run(mode, True).stats for mode in ("descriptor", "head_pointer", "report_status"))
    # The same frames cross the link in every mode: the same RX payload (a write's bytes less its 24 of header and
    # framing); the TLP counts differ only where a buffer that crosses a 4 KB boundary (two TLPs) took another
    # frame, as buffers recycle in another order.
    def payload(x, kind):
        return x[f"system.nic0.pcie.up_bytes.{kind}"] - 24 * x[f"system.nic0.pcie.up_tlps.{kind}"]

    assert payload(h, "rx_data") == payload(d, "rx_data") == payload(r, "rx_data") > 0
    for kind in ("rx_data", "tx_data"):
        tlps = [x[f"system.nic0.pcie.up_tlps.{kind}"] for x in (d, h, r)]
        assert min(tlps) > 0.98 * max(tlps), (kind, tlps)
    completion = [x["system.nic0.pcie.up_bytes.tx_completion"] for x in (d, h, r)]
    assert completion[0] > completion[1] > completion[2] > 0


def test_the_reclaim_group_is_a_server_argument(kvs_server):
    """tx_rs=8: the driver sets RS on every 8th descriptor and reclaims 8 at a time; the NIC writes back once per
    group; every response is still checked."""
    r = run("report_status", True, ("tx_rs=8",))
    s = r.stats
    assert r.stop_reason == "client_done" and s["client.lost_requests"] == 0
    assert s["client.responses_checked"] == ITEMS + REQUESTS
    sent = sum(s[f"system.nic0.queue{q}.tx_frames"] for q in range(2))
    assert abs(s["system.nic0.pcie.up_tlps.tx_completion"] - sent / 8) <= 2, sent
