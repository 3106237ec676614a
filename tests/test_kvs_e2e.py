"""End-to-end functional runs of the KVS server (workloads/kvs) under the engine with the NIC model and the ghost
client: every response is checked by the client (a wrong value, a wrong echo, an unexplained miss or a lost
response raises ClientCheckFailed), and these tests check the run's statistics on top.

The key derivation and keyhash are re-implemented here (XXH64 from its published description) so the per-partition
request counts can be compared with the analytic Zipf distribution independently of the engine. That the checker rejects wrong data (values, echoes, unexplained misses, responses
to frames never sent) is tested with forged responses in models/engine/src/client.rs.
"""

from __future__ import annotations

import subprocess

import pytest

from configs import kvs_functional
from models.client import Client
from models.errors import MemoryFault
from models.nic import Nic
from models.params import ParamError
from models.sim import simulate
from models.system import System, Workload

from conftest import WORKLOADS, cross_compile

SERVER_ARGS = ("log_mib=8", "buckets=4096")  # holds every test data set: no eviction, so no GET may miss


@pytest.fixture(scope="module")
def kvs_server(engine):
    proc = subprocess.run(["make", "-s", "-C", str(WORKLOADS), "kvs"], capture_output=True, text=True)
    if proc.returncode != 0 or not kvs_functional.KVS_SERVER.is_file():
        pytest.fail(f"building the KVS server failed:\n{proc.stdout}\n{proc.stderr}", pytrace=False)
    return kvs_functional.KVS_SERVER


def run(harts=4, mode="erew", server_args=SERVER_ARGS, **client):
    client.setdefault("items", 8192)
    return simulate(kvs_functional.system(harts=harts, mode=mode, server_args=server_args, **client))


# --------------------------------------------------------------------------------------------- XXH64 and keys

M64 = (1 << 64) - 1
P1, P2, P3, P4, P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x85EBCA77C2B2AE63,
                      0x27D4EB2F165667C5)


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def _round(acc, lane):
    return (_rotl((acc + lane * P2) & M64, 31) * P1) & M64


def xxh64(data: bytes, seed: int = 0) -> int:
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M64, (seed + P2) & M64, seed, (seed - P1) & M64]
        while i + 32 <= n:
            for k in range(4):
                v[k] = _round(v[k], int.from_bytes(data[i + 8 * k:i + 8 * k + 8], "little"))
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & M64
        for lane in v:
            h = ((h ^ _round(0, lane)) * P1 + P4) & M64
    else:
        h = (seed + P5) & M64
    h = (h + n) & M64
    while i + 8 <= n:
        h ^= _round(0, int.from_bytes(data[i:i + 8], "little"))
        h = (_rotl(h, 27) * P1 + P4) & M64
        i += 8
    if i + 4 <= n:
        h ^= (int.from_bytes(data[i:i + 4], "little") * P1) & M64
        h = (_rotl(h, 23) * P2 + P3) & M64
        i += 4
    while i < n:
        h ^= (data[i] * P5) & M64
        h = (_rotl(h, 11) * P1) & M64
        i += 1
    h ^= h >> 33
    h = (h * P2) & M64
    h ^= h >> 29
    h = (h * P3) & M64
    return h ^ (h >> 32)


def key_of(item: int, length: int) -> bytes:
    """The client's key of an item (models/engine/src/client.rs)."""
    base = item.to_bytes(8, "little")
    return bytes(base[j] if j < 8 else ((j * 0x9D) & 0xFF) ^ base[j % 8] for j in range(length))


def test_python_xxh64_matches_the_shared_vectors():
    lines = (WORKLOADS / "kvs" / "keyhash_vectors.txt").read_text().splitlines()
    vectors = [line.split() for line in lines if line and not line.startswith("#")]
    assert len(vectors) > 50
    for key, want in vectors:
        assert xxh64(b"" if key == "-" else bytes.fromhex(key)) == int(want, 16), key


# --------------------------------------------------------------------------------------------- the matrix

MATRIX = [(pop, get, mode, rpp, harts)
          for pop in ("uniform", "zipf") for get in (0.95, 0.5) for mode in ("erew", "crew")
          for rpp in (1, 4) for harts in (1, 8)]


@pytest.mark.slow
@pytest.mark.parametrize("pop, get_ratio, mode, rpp, harts", MATRIX,
                         ids=[f"{p}-get{int(g * 100)}-{m}-rpp{r}-h{h}" for p, g, m, r, h in MATRIX])
def test_every_response_is_right(kvs_server, pop, get_ratio, mode, rpp, harts):
    requests = 6000
    r = run(harts=harts, mode=mode, popularity=pop, get_ratio=get_ratio, requests_per_packet=rpp,
            requests=requests, seed=harts * 7 + rpp)
    s = r.stats
    assert r.stop_reason == "client_done"
    assert s["client.requests"] == requests
    assert s["client.gets"] + s["client.puts"] == requests
    assert s["client.hits"] == s["client.gets"], "the data set fits: every GET must hit"
    assert s["client.misses"] == 0
    assert s["client.load.requests"] == 8192
    assert s["client.responses_checked"] == 8192 + requests
    assert abs(s["client.gets"] / requests - get_ratio) < 0.03
    # one response frame per request frame; at most rpp requests per frame
    assert s["client.packets"] >= requests / rpp
    assert s["system.nic0.port0.rx_frames"] == s["system.nic0.port0.tx_frames"] == s["client.packets"]
    assert s["system.nic0.port0.rx_drops"] == 0
    per_core = [s[f"client.core{c}.requests"] for c in range(harts)]
    per_part = [s[f"client.partition{c}.requests"] for c in range(harts)]
    assert sum(per_core) == sum(per_part) == requests
    if mode == "erew":
        assert per_core == per_part, "EREW sends every request to its partition's core"
    for q in range(harts):
        assert 1 <= s[f"system.nic0.queue{q}.rx_batch_mean"] <= 32
        assert s[f"system.nic0.queue{q}.rx_frames"] == s[f"system.nic0.queue{q}.tx_frames"]
    assert s["client.insts_per_request"] > 50


def test_crew_reads_spread_round_robin(kvs_server):
    """CREW: GETs go round-robin over the cores whatever their partition; PUTs to the owner."""
    r = run(harts=4, mode="crew", popularity="zipf", get_ratio=1.0, requests=4000)
    per_core = [r.stats[f"client.core{c}.requests"] for c in range(4)]
    assert per_core == [1000] * 4
    per_part = [r.stats[f"client.partition{c}.requests"] for c in range(4)]
    assert max(per_part) > 1100, "Zipf makes some partition hotter; round-robin hides it from the cores"


def test_zipf_partition_counts_match_the_analytic_distribution(kvs_server):
    """Per-partition request counts under Zipf(0.99), against the expected counts computed here from the pmf and
    this file's own keyhash: Pearson's chi-square with a fixed seed."""
    from scipy import stats as sst

    items, harts, requests, theta = 4096, 8, 40000, 0.99
    r = run(harts=harts, mode="erew", popularity="zipf", zipf_theta=theta, get_ratio=0.95, items=items,
            requests=requests, seed=2024)
    observed = [r.stats[f"client.partition{p}.requests"] for p in range(harts)]
    weights = [(k + 1) ** -theta for k in range(items)]
    norm = sum(weights)
    expected = [0.0] * harts
    for item, w in enumerate(weights):
        expected[(xxh64(key_of(item, 8)) >> 48) % harts] += requests * w / norm
    chi2, p = sst.chisquare(observed, expected)
    assert p > 0.001, f"chi-square {chi2:.1f}, p = {p:.3g}: observed {observed}, expected {expected}"
    # and the test has power: a uniform popularity gives visibly different partition counts
    uniform = [0.0] * harts
    for item in range(items):
        uniform[(xxh64(key_of(item, 8)) >> 48) % harts] += requests / items
    assert sst.chisquare(observed, uniform)[1] < 1e-6


# --------------------------------------------------------------------------------------------- bad input


def test_fuzz_frames_are_answered_or_dropped_and_the_data_survives(kvs_server):
    """Random and mutated frames (bad headers, truncation, bad counts, unknown ops, zero and 255-byte keys, values
    too large for a frame) between the bulk load and the measured phase; then every measured response must still
    be right, with no miss."""
    r = run(harts=4, mode="erew", fuzz_frames=3000, requests=5000, seed=11)
    s = r.stats
    assert r.stop_reason == "client_done"
    assert s["client.fuzz.sent"] == 3000
    assert s["client.fuzz.malformed_responses"] == 0
    assert s["client.fuzz.answered"] > 500
    assert s["client.fuzz.server_dropped"] > 300, "malformed frames are dropped by the server"
    assert s["client.fuzz.nic_dropped"] > 0, "frames with broken headers match no steering entry"
    assert s["client.fuzz.answered"] + s["client.fuzz.server_dropped"] + s["client.fuzz.nic_dropped"] == 3000
    for code in (1, 2, 3, 4, 5):  # OK, NOT_FOUND, BAD_OP, BAD_LENGTH, WRONG_PARTITION all occur
        assert s.get(f"client.fuzz.result{code}", 0) > 0, code
    assert s["client.hits"] == s["client.gets"] and s["client.misses"] == 0
    assert s["client.requests"] == 5000


def test_oversized_items_are_refused_and_evictions_explain_misses(kvs_server):
    """A 4 KiB log: values above a quarter of it are answered TOO_LARGE; the data set does not fit, so GETs miss,
    and the client accepts each miss only where its eviction bound explains it."""
    r = run(harts=2, mode="erew", server_args=("log_kib=4", "buckets=64"), items=512, fuzz_frames=2000,
            requests=4000, seed=5)
    s = r.stats
    assert s.get("client.fuzz.result6", 0) > 0, "TOO_LARGE"
    assert s["client.misses"] > 0 and s["client.hits"] > 0
    assert s["client.hits"] + s["client.misses"] == s["client.gets"]


def test_no_eviction_bound_hides_a_real_miss(kvs_server):
    """Without a bulk load a GET of a never-stored key may miss; with the load and a log that holds everything,
    the same misses would fail the run: here they are explained only by 'never stored'."""
    r = run(harts=2, bulk_load=False, get_ratio=0.5, requests=3000, items=4096)
    assert r.stats["client.misses"] > 0
    assert r.stats["client.load.requests"] == 0


# --------------------------------------------------------------------------------------------- configuration


def test_client_mode_must_agree_with_the_server(kvs_server):
    system = kvs_functional.system(harts=2)
    system.client.mode = "crew"  # the server runs mode=erew
    with pytest.raises(ParamError, match="mode"):
        system.validate()
    system.client.mode = "auto"
    system.validate()
    plain = System(workload=Workload(binary=str(kvs_server)), client=Client(enabled=True))
    with pytest.raises(ParamError, match="needs System.nic.enabled"):
        plain.validate()


def test_without_a_nic_the_server_finds_no_queue(kvs_server):
    r = simulate(System(harts=1, workload=Workload(binary=str(kvs_server), argv=list(SERVER_ARGS))))
    assert r.exit_code == 1
    assert b"no NIC queue" in bytes(r.stdout)


def test_device_range_without_a_nic_faults_clearly(engine, tmp_path):
    src = tmp_path / "mmio.c"
    src.write_text("int main(void){ return (int)*(volatile unsigned long *)0x3000000048UL; }\n")
    binary = cross_compile([src], tmp_path / "mmio", runtime=True)
    with pytest.raises(MemoryFault, match="device range"):
        simulate(System(workload=Workload(binary=str(binary))))
    # with a NIC the same load reads queue 0's QUEUE_ID register (0)
    r = simulate(System(workload=Workload(binary=str(binary)), nic=Nic(enabled=True)))
    assert r.exit_code == 0


def test_same_seed_same_stats_and_several_ports(kvs_server):
    """Deterministic: the same configuration and seed give identical stats. Two ports: queues split over them,
    the client sends each frame to its queue's port, and nothing is dropped."""
    def go():
        system = kvs_functional.system(harts=4, mode="crew", server_args=SERVER_ARGS, items=4096, requests=3000,
                                       popularity="zipf", requests_per_packet=4, seed=9)
        system.nic.ports = 2
        return simulate(system)

    a, b = go(), go()
    assert a.stats == b.stats
    s = a.stats
    assert s["client.hits"] == s["client.gets"]
    assert s["system.nic0.port0.rx_frames"] > 0 and s["system.nic0.port1.rx_frames"] > 0
    assert s["system.nic0.port0.rx_drops"] == s["system.nic0.port1.rx_drops"] == 0
    assert s["system.nic0.port0.rx_frames"] == s["system.nic0.queue0.rx_frames"] + s["system.nic0.queue1.rx_frames"]
    hist = sum(s[f"system.nic0.rx_batch_size::{k}"] for k in [*range(33), "more"])
    assert hist == sum(s[f"system.nic0.queue{q}.rx_batches"] for q in range(4))


def test_the_client_needs_a_queue_per_hart(kvs_server):
    from models.params import ParamError

    system = kvs_functional.system(harts=4, server_args=SERVER_ARGS)
    system.nic.queues = 2
    system.nic.ports = 1
    with pytest.raises(ParamError, match="queue for every hart"):       # refused before the run (System.validate)
        simulate(system)


def test_the_measured_phase_is_the_region_of_interest(kvs_server):
    """The client marks its measured phase as the ROI: system.roi.* covers exactly the measured requests, so a
    detailed run with detailed_start='roi' fast-forwards the bulk load and times only the measured phase."""
    s = run(harts=2, items=2048, requests=2000).stats
    assert s["system.roi.begin_insts"] >= s["client.load.insts"] > 0
    assert s["system.roi.insts"] == pytest.approx(s["client.insts_per_request"] * s["client.requests"])
    assert s["system.insts"] == s["system.roi.insts"], "the stats were reset when the measured phase began"

    system = kvs_functional.system(harts=2, server_args=SERVER_ARGS, items=2048, requests=1000)
    system.mode = "detailed"
    system.detailed_start = "roi"
    r = simulate(system)
    assert r.stop_reason == "client_done"
    assert r.stats["client.hits"] == r.stats["client.gets"]
    assert r.stats["system.roi.begin_insts"] > r.stats["client.load.insts"] > 0


def test_rx_batch_size_follows_the_offered_load(kvs_server):
    """The RX batch size (descriptors re-posted per doorbell) is bounded by the frames in flight and grows with
    them, up to the server's burst of 32."""
    small = run(harts=2, items=2048, requests=3000, window=3).stats
    large = run(harts=2, items=2048, requests=3000, window=100).stats
    for q in range(2):
        assert 1 <= small[f"system.nic0.queue{q}.rx_batch_mean"] <= 3
        assert small[f"system.nic0.queue{q}.rx_batch_max"] <= 3
        assert large[f"system.nic0.queue{q}.rx_batch_mean"] > 20
        assert large[f"system.nic0.queue{q}.rx_batch_max"] == 32
    assert sum(small[f"system.nic0.rx_batch_size::{k}"] for k in range(4, 33)) == 0
