"""The other systems of the seed papers (configs/mica_e5_2680_dual.py, tilepro64.py, kvcache_e5_4640_quad.py): each
describes its paper's hardware, runs end to end in detailed timing at reduced size with every response checked, and
refuses the bad input particular to it before the run."""

from __future__ import annotations

import pytest

from configs import kvcache_e5_4640_quad as kvcache
from configs import mica_e5_2680_dual as mica
from configs import tilepro64 as tile
from drivers import studies
from models.params import ParamError
from models.sim import simulate

MB = 1 << 20
SMALL_KVS = ["mode=erew", "log_mib=1", "buckets=1024"]   # a small MICA store per partition, for short runs


def assert_every_response_right(result, requests: int) -> dict:
    """The run finished because the client had every response, and every one was right (the client fails the run on
    a wrong value; a miss here could only be a lost item, none is evicted at this size)."""
    s = result.stats
    assert result.stop_reason == "client_done", result.stdout
    assert (s["client.requests"], s["client.lost_requests"], s["client.misses"]) == (requests, 0, 0)
    assert s["client.hits"] == s["client.gets"] > 0
    assert s["client.throughput_mrps"] > 0
    return s


def frames_of_nic(stats: dict, k: int, ports: int) -> int:
    return sum(stats[f"system.nic{k}.port{p}.rx_frames"] for p in range(ports))


# ---- MICA's dual Xeon E5-2680 -------------------------------------------------------------------------------------

def test_mica_server_is_its_hardware_table():
    s = mica.system()
    s.validate()
    assert len(s.sockets) == 2 and s.harts == 16
    assert {c.clock for c in s.hart_cores()} == {2_700_000_000}
    assert [x.caches.llc.size for x in s.sockets] == [20 * MB] * 2
    assert [(x.memory.preset, x.memory.channels) for x in s.sockets] == [("DDR3-1600", 4)] * 2
    # Four dual-port cards, two per socket, each its 82599 on its own PCIe 2.0 x8 link: 8 x 10 GbE ports.
    assert [(n.socket, n.ports, n.port_gbps, n.pcie_gen, n.pcie_lanes) for n in s.nics] == \
        [(k, 2, 10.0, 2, 8) for k in (0, 0, 1, 1)]
    assert s.workload.argv[0] == "mode=erew" and s.client.mode == "erew" and s.client.dataset == "tiny"
    assert s.technology.node == 32.0


@pytest.mark.parametrize("workload, popularity, get_ratio", [("uniform-95", "uniform", 0.95),
                                                             ("zipf-50", "zipf", 0.5)])
def test_mica_server_serves_its_workloads_in_detail(workload, popularity, get_ratio):
    s = mica.system(cores_per_socket=2, requests=600, items=2048, workload=workload)
    assert (s.client.popularity, s.client.get_ratio, s.client.zipf_theta) == (popularity, get_ratio, 0.99)
    s.workload.argv = SMALL_KVS
    stats = assert_every_response_right(simulate(s), 600)
    # Two cores per port, each socket's cores on its own socket's card: NIC k carries exactly its cores' requests.
    assert [n.ports for n in s.nics] == [1, 1]
    per_core = [stats[f"client.core{c}.requests"] for c in range(4)]
    assert [frames_of_nic(stats, k, 1) for k in range(2)] == [sum(per_core[:2]), sum(per_core[2:])]
    assert stats["system.nic0.pcie.up_bytes"] > 0


def test_mica_refuses_what_its_server_does_not_have():
    with pytest.raises(ValueError, match="workload = 'zipf-80'"):
        mica.system(workload="zipf-80")
    with pytest.raises(ValueError, match="1 to 8 cores"):
        mica.system(cores_per_socket=12)
    s = mica.system()
    s.nics[3].socket = 2
    with pytest.raises(ParamError, match=r"System\.nics\[3\]\.socket = 2: socket 2 does not exist.*0\.\.1"):
        s.validate()


# ---- the TILEPro64 node --------------------------------------------------------------------------------------------

def test_tilepro64_is_its_hardware_table():
    s = tile.system()
    s.validate()
    assert s.harts == 64 and s.noc.dimensions(64) == (8, 8) and s.core.clock == 866_000_000
    assert (s.core.model, s.core.issue_width, s.core.int_alus, s.core.load_ports) == ("inorder", 3, 2, 1)
    assert (s.caches.l1i.size, s.caches.l1d.size, s.caches.l2_enabled) == (16 << 10, 8 << 10, False)
    assert (s.caches.llc.size // s.caches.llc_slices, s.caches.llc_slices) == (64 << 10, 64)
    assert (s.memory.channels, s.memory.resolved_timings()["t_ck"], len(s.noc.mem_ctrl_routers)) == (4, 2500, 4)
    assert (s.nic.attach, s.nic.ports, s.nic.port_gbps, s.nic.ddio) == ("on_die", 2, 10.0, True)
    assert s.workload.binary.endswith("mcd-server") and s.client.protocol == "memcached"


def test_tilepro64_serves_memcached_shards_in_detail():
    s = tile.system(shards=4, requests=400, items=2048)
    assert s.caches.llc_slices == 64                  # a reduced run keeps the whole chip's distributed L3
    stats = assert_every_response_right(simulate(s), 400)
    assert sum(stats[f"client.core{c}.requests"] for c in range(4)) == 400
    # The frames come in over the on-die MAC (no PCIe) and are injected into the L3.
    assert stats["system.nic0.on_die.up_bytes.rx_data"] > 0 and "system.nic0.pcie.up_bytes" not in stats
    assert stats["system.socket0.ddio.write_allocs"] > 0 and stats["system.socket0.ddio.writes_to_memory"] == 0


@pytest.mark.parametrize("shards", [3, 48, 0, 128])
def test_tilepro64_refuses_shards_that_do_not_divide_the_tiles(shards):
    with pytest.raises(ParamError, match=rf"tilepro64 shards = {shards}: .* divide the 64 tiles .*1, 2, 4, 8, 16, "
                                         "32, 64"):
        tile.system(shards=shards)


@pytest.mark.parametrize("config, name", [(tile, "tilepro64"), (kvcache, "kvcache")])
@pytest.mark.parametrize("store_mem, why", [("lots", "not a size"), ("16 furlongs", "not a size"),
                                            ("0MiB", "each instance.s store needs at least one byte")])
def test_a_store_that_is_not_a_size_is_refused_before_the_run(config, name, store_mem, why):
    with pytest.raises(ParamError, match=rf"{name} store_mem = '{store_mem}': {why}"):
        config.system(store_mem=store_mem)


# ---- KV-Cache on four Xeon E5-4640 ---------------------------------------------------------------------------------

def test_kvcache_server_is_its_hardware_table():
    s = kvcache.system()
    s.validate()
    assert len(s.sockets) == 4 and s.harts == 32
    assert {c.clock for c in s.hart_cores()} == {2_400_000_000}
    assert [x.caches.llc.size for x in s.sockets] == [20 * MB] * 4
    assert [(n.socket, n.ports, n.port_gbps, n.ddio) for n in s.nics] == [(k, 1, 10.0, True) for k in range(4)]
    assert (s.client.protocol, s.client.transport, s.client.get_ratio, s.client.sizes()) == \
        ("memcached", "udp", 1.0, (16, 64))


def test_kvcache_server_serves_64_byte_gets_in_detail():
    s = kvcache.system(cores_per_socket=2, requests=800, items=2048)
    stats = assert_every_response_right(simulate(s), 800)
    assert stats["client.puts"] == 0 and stats["client.value_size"] == 64
    per_core = [stats[f"client.core{c}.requests"] for c in range(8)]
    # One NIC per socket, serving exactly that socket's two cores.
    assert [frames_of_nic(stats, k, 1) for k in range(4)] == [sum(per_core[2 * k:2 * k + 2]) for k in range(4)]
    assert min(per_core) > 0


def test_kvcache_refuses_a_nic_on_a_socket_that_does_not_exist():
    kvcache.system(sockets=2, nic_sockets=[0, 1]).validate()
    with pytest.raises(ParamError, match=r"System\.nics\[1\]\.socket = 4: socket 4 does not exist.*0\.\.3"):
        kvcache.system(nic_sockets=[0, 4, 1, 2]).validate()
    with pytest.raises(ValueError, match="1 to 4 sockets"):
        kvcache.system(sockets=5)


# ---- the studies ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("name", studies.SEEDS)
def test_seed_studies_resolve_and_validate_their_points(name, full):
    """Every point of the study's sweeps builds a valid System before anything runs (a ParamError otherwise), at
    the paper's conditions as far as the host allows (figures.py's default) and reduced (--reduced)."""
    sweeps = studies.get(name).sweeps(full)
    assert sweeps and all(sw.resolve() for sw in sweeps)
    # The two sets of conditions never share a sweep store.
    assert not {sw.name for sw in sweeps} & {sw.name for sw in studies.get(name).sweeps(not full)}


def test_mica_study_runs_the_whole_server_on_the_largest_data_set_the_host_allows():
    from drivers.studies import common, seed_mica

    full = seed_mica.sweeps(True)[0].resolve()
    assert {p.system().harts for p in full} == {16} and len(full) == 4          # MICA's four workloads
    assert {p.system().client.items for p in full} == {16 << 20}
    assert len({p.data_set for p in full}) == 1                                 # loaded once, restored by all
    # 16 Mi keys fit 3 GiB per process; the next power of two does not, nor does the paper's 192 Mi.
    assert common.guest_memory_bytes(16 << 20, 16) < 3 << 30 < common.guest_memory_bytes(32 << 20, 16)
    assert common.guest_memory_bytes(common.PAPER_ITEMS, 16) > 20 << 30
    # Each partition's store holds its share without eviction (the server's own sizes from the item count).
    assert seed_mica.server(8, 16 << 20, 200, True, 6250).workload.argv == \
        ["mode=erew", "log_mib=128", "buckets=524288"]


@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("name", studies.SEEDS)
def test_seed_studies_report_a_sweep_with_no_points_as_such(name, full, tmp_path):
    """Drawing before any point is stored (figures.py --draw-only) writes the tables and a report saying so, and
    what was reduced."""
    import pandas as pd

    study = studies.get(name)
    empty = {sw.name: pd.DataFrame({"status": pd.Series([], dtype=str)}) for sw in study.sweeps(full)}
    written = study.make(empty, tmp_path, full)
    report = (tmp_path / f"{name}.md").read_text()
    assert "(no points)" in report and "REDUCED" in report
    assert report.count("--reduced") == (0 if full else 1)
    assert all(p.exists() for p in written) and not list(tmp_path.glob("*.png"))
