"""What cannot be right is refused or flagged before (or right after) a run: a KVS server too small for its data
set, cache hierarchies that cannot be built, a run stopped before its measured phase finished, and limits of the
simulator (guest memory for the data set)."""

from __future__ import annotations

import pathlib
import warnings

import pytest

import configs
from models.params import ParamError


def kvs(**client):
    return configs.load("kvs_functional").system(**client)


def argv_of(system) -> list[str]:
    return system.to_dict()["workload"]["argv"]


def test_the_kvs_server_is_sized_from_the_item_count():
    """`--set client.items=2000000` on kvs_default: 500k Tiny items (40 bytes each in the log) per partition need
    more than the 16 MiB log and 16384-bucket index the config used to pass; the sizes follow the items, and the
    default item count keeps the sizes (and so the statistics) it had."""
    from models.client import ServerEvicts

    system = configs.load("kvs_default").system()
    assert argv_of(system) == ["mode=erew", "log_mib=16", "buckets=16384"]
    system.client.items = 2_000_000
    with warnings.catch_warnings():
        warnings.simplefilter("error", ServerEvicts)
        system.validate()
    assert argv_of(system) == ["mode=erew", "log_mib=64", "buckets=262144"]
    # Larger items need a larger log: 65536 Large items (1176 bytes) on 4 partitions.
    assert "log_mib=64" in argv_of(kvs(dataset="large"))
    # What the user gives is honoured.
    assert argv_of(kvs(server_args=("log_kib=512",)))[1:] == ["log_kib=512", "buckets=16384"]


def test_sizes_that_cannot_hold_the_data_set_warn_naming_them():
    from models.client import ServerEvicts

    system = kvs(server_args=("log_mib=16", "buckets=16384"), items=2_000_000)
    with pytest.warns(ServerEvicts, match=r"Client.items = 2,000,000 over 4 partitions\) but the log \(16 MiB per "
                                          r"partition.* and the index \(16,384 buckets"):
        system.validate()


def test_misses_from_a_too_small_log_are_flagged_after_the_run(tmp_path, engine):
    """A run whose GETs miss because the server evicted says so in its status and warns, naming the sizes."""
    from models.client import ServerEvicts
    from models.sim import simulate

    system = kvs(harts=1, server_args=("log_kib=64", "buckets=64"), items=4096, requests=2000)
    with pytest.warns(ServerEvicts) as caught:
        result = simulate(system, tmp_path / "run")
    assert result.stats["client.misses"] > 100
    assert any("measured GETs missed" in str(w.message) and "log 0.0625 MiB and 64 buckets" in str(w.message)
               for w in caught)
    status = (tmp_path / "run" / "status").read_text()
    assert status.startswith("ok: client_done; warning:") and "GETs missed" in status, status


def test_a_larger_data_set_gets_a_log_that_holds_it(engine):
    """16384 Large items on one hart (19 MB of log) evicted from the 16 MiB log the config used to pass; sized from
    the items, every GET hits."""
    from models.sim import simulate

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = simulate(kvs(harts=1, dataset="large", items=16384, requests=3000))
    assert result.stats["client.misses"] == 0 and result.stats["client.hits"] == result.stats["client.gets"] > 2000
    assert result.status == "ok: client_done"


def test_an_l1_larger_than_its_inclusive_llc_is_refused():
    system = configs.load("kvs_default").system()        # 4 cores: a 3 MiB LLC
    system.caches.l1d.size = "8MiB"
    system.caches.l1d.hit_latency = 40                  # not the latency floor: the inclusion is what is wrong
    with pytest.raises(ParamError, match=r"CacheHierarchy.l1d.size = 8388608 bytes exceeds CacheHierarchy.llc.size "
                                         r"= 3145728 bytes"):
        system.validate()
    system.caches.llc.inclusive = False                 # a non-inclusive LLC may be smaller (Mercury's)
    system.validate()


def test_a_hit_latency_far_below_the_capacity_is_refused():
    """A 4 GiB LLC (2 slices of 2 GiB) cannot answer in the small LLC's 10 cycles; the floor names the parameters
    and what they need."""
    system = configs.load("kvs_default").system()
    system.caches.llc.size = "4GiB"
    with pytest.raises(ParamError, match=r"System.caches.llc.hit_latency = 10 cycles is below the 128 cycles an array "
                                         r"of System.caches.llc.size = 4294967296 bytes in 2 slices"):
        system.validate()
    system.caches.llc.hit_latency = 128
    system.validate()
    system.caches.l1d.size = "3MiB"                     # a 3 MiB L1 in 4 cycles at 2.5 GHz: 1.96 ns, 5 cycles
    with pytest.raises(ParamError, match=r"System.caches.l1d.hit_latency = 4 cycles is below the 5 cycles"):
        system.validate()
    # Functional runs do not time the caches: nothing to refuse.
    functional = kvs()
    functional.caches.llc.size = "4GiB"
    functional.validate()


def test_every_config_passes_the_cache_checks():
    for name in configs.available():
        system = configs.load(name).system()
        system.validate()


def test_a_run_stopped_before_the_measured_phase_is_incomplete(tmp_path, engine):
    from models.sim import simulate

    system = kvs(harts=2)
    system.max_insts = 2_000_000
    result = simulate(system, tmp_path / "run")
    assert result.stop_reason == "max_insts"
    assert result.status.startswith("incomplete: stopped by max_insts"), result.status
    assert "0 of 50,000 measured requests answered" in result.status
    assert (tmp_path / "run" / "status").read_text() == result.status + "\n"


def test_guest_memory_for_the_data_set_is_a_named_limit():
    """2^28 Tiny items need over 10 GiB of log and index in the guest: refused before the run, naming mem_limit."""
    system = kvs(items=1 << 28)
    with pytest.raises(ParamError, match=r"System.mem_limit = 4294967296 bytes: the KVS server's 4 partitions"):
        system.validate()
    system.mem_limit = "64GiB"
    system.validate()


def test_server_arguments_the_kvs_server_refuses_are_refused_before_the_run():
    """buckets=8738 (the LLC study's full-scale index, not a power of two) made the server exit at start-up with
    'bad argument' and the run end 'ok' with no request answered."""
    for arg, allowed in (("buckets=8738", "a power of two"), ("log_mib=3", "a power of two"),
                         ("rx_ring=4", r"a power of two in \[8, 4096\]"), ("lru=2", "0 or 1"),
                         ("mode=rcu", "'erew' or 'crew'"), ("log_size=16", "no argument 'log_size'")):
        system = kvs(server_args=(arg,))
        with pytest.raises(ParamError, match=rf"System.workload.argv: '{arg}': .*{allowed}"):
            system.validate()
    # The TX ring's arguments against one another (kvs_config_check refuses these at start-up).
    for args, why in ((("tx_ring=64", "tx_rs=32"), "tx_rs=32: a TX reclaim group is at most a quarter of tx_ring=64"),
                      (("tx_free=600",), r"tx_free=600: .* between the reclaim group \(32\) and tx_ring \(512\)"),
                      (("tx_rs=16", "tx_free=8"), r"tx_free=8: .* reclaim group \(16\)")):
        with pytest.raises(ParamError, match=f"System.workload.argv: {why}"):
            kvs(server_args=args).validate()
    kvs(server_args=("tx_ring=64", "tx_free=64")).validate()   # at every burst: the compact driver's setting
    # The check's defaults are the server's own (kvs_server.c kvs_config_default and its reclaim-group default).
    from models.client import KVS_SERVER_DEFAULT_TX_RING, KVS_SERVER_DEFAULT_TX_RS

    source = (pathlib.Path(__file__).parents[1] / "workloads/kvs/kvs_server.c").read_text()
    assert f"cfg->tx_ring = {KVS_SERVER_DEFAULT_TX_RING};" in source
    assert f"unsigned group = cfg->tx_rs ? cfg->tx_rs : ({KVS_SERVER_DEFAULT_TX_RS} * 4 <= cfg->tx_ring ? " \
           f"{KVS_SERVER_DEFAULT_TX_RS} : cfg->tx_ring / 4);" in source
    from drivers.studies import llc

    for sweep in llc.sweeps(full=True):
        sweep.resolve()                                  # the study's points are valid at full scale


def test_a_log_window_is_checked_against_its_log_before_the_run():
    """log_window_kib= (the part of its log a partition keeps) is refused, as kvs_config_check refuses it at the
    server's start-up, unless it is more than half of a log given beside it and at most all of it; the eviction
    warning then counts the window, not the log."""
    from models.client import ServerEvicts, kvs_server_window

    for args, why in ((("log_window_kib=700",), r"log_window_kib= needs the log's own size beside it"),
                      (("log_mib=1", "log_window_kib=512"), r"log_window_kib=512: .* more than half .* \(1024 KiB"),
                      (("log_mib=1", "log_window_kib=1025"), r"log_window_kib=1025: .* at most all of it"),
                      (("log_mib=1", "log_window_kib=2"), r"'log_window_kib=2': .*in \[4, 2\^30\]")):
        with pytest.raises(ParamError, match=f"System.workload.argv: {why}"):
            kvs(server_args=args).validate()
    assert kvs_server_window(["log_mib=1", "log_window_kib=513"]) == 513 << 10
    assert kvs_server_window(["log_mib=1"]) == 1 << 20
    # 4 partitions of 16,384 Tiny items (about 656 KB each): a 2 MiB log holds them in its newer half, a 1.25 MiB
    # window of it does not.
    with warnings.catch_warnings():
        warnings.simplefilter("error", ServerEvicts)
        kvs(server_args=("log_mib=2", "buckets=16384"), items=65536).validate()
    with pytest.warns(ServerEvicts, match=r"the log \(2 MiB, of which it keeps 1.25 MiB per partition"):
        kvs(server_args=("log_mib=2", "log_window_kib=1280", "buckets=16384"), items=65536).validate()


def test_a_log_window_evicts_and_the_checker_accepts_what_it_evicted(engine):
    """4,096 Tiny items (160 KiB) on one hart with a 512 KiB log: all of them fit in its newer half, so no GET
    misses. Keeping 260 KiB of it, 30 KiB of the items sit in the window's older half and are re-appended when read
    (more instructions a request), the tail passes the window after about 2,600 re-appends, and the items it leaves
    behind miss; the client ages items against the window, so it accepts those misses (against the log's 512 KiB
    it would call them unexplained)."""
    from models.sim import simulate

    def run(*args):
        system = kvs(harts=1, server_args=(*args, "buckets=1024"), items=4096, requests=30000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return simulate(system)
    whole, window = run("log_kib=512"), run("log_kib=512", "log_window_kib=260")
    assert whole.stats["client.misses"] == 0 and whole.status == "ok: client_done"
    assert window.stats["client.misses"] > 0 and window.status.startswith("ok: client_done; warning:")
    assert window.stats["client.insts_per_request"] > whole.stats["client.insts_per_request"]


def test_buckets_used_is_checked_against_its_index_before_the_run():
    """buckets_used= (the buckets a partition's index uses, fewer than the power of two allocated) is refused, as
    kvs_config_check refuses it at the server's start-up, unless it is more than half of a buckets= given beside it
    and at most all of them; the index-loss warning then counts the buckets in use."""
    from models.client import ServerEvicts, kvs_server_capacity

    for args, why in ((("buckets_used=3000",), r"buckets_used= needs the index's own size beside it"),
                      (("buckets=4096", "buckets_used=2048"), r"buckets_used=2048: .* more than half .*buckets=4096"),
                      (("buckets=4096", "buckets_used=4097"), r"buckets_used=4097: .* at most all of them"),
                      (("buckets=4096", "buckets_used=0"), r"'buckets_used=0': .*in \[1, 2\^32\]")):
        with pytest.raises(ParamError, match=f"System.workload.argv: {why}"):
            kvs(server_args=args).validate()
    assert kvs_server_capacity(["buckets=4096", "buckets_used=2049"])[1] == 2049
    assert kvs_server_capacity(["buckets=4096"])[1] == 4096
    # 4 partitions of 16,384 Tiny items: 4,096 buckets (4 keys a bucket) drop none, 2,049 of them (8 a bucket)
    # drop some to buckets of more than 15 keys.
    with warnings.catch_warnings():
        warnings.simplefilter("error", ServerEvicts)
        kvs(server_args=("log_mib=4", "buckets=4096"), items=65536).validate()
    with pytest.warns(ServerEvicts, match=r"the index \(2,049 buckets of 15 per partition\) drops about"):
        kvs(server_args=("log_mib=4", "buckets=4096", "buckets_used=2049"), items=65536).validate()


def test_an_index_of_fewer_buckets_drops_items_and_the_checker_accepts_what_it_dropped(engine):
    """4,096 Tiny items on one hart, the log holding them all: 1,024 buckets (4 keys a bucket) drop none, so no GET
    misses; using 273 of 512 buckets (15 a bucket) the server's crowded buckets drop items, and the client, which
    counts keys in the same 273 buckets, accepts those misses (with the mask's buckets it would count other keys
    and call some of them unexplained)."""
    from models.sim import simulate

    def run(*args):
        system = kvs(harts=1, server_args=("log_kib=512", *args), items=4096, requests=20000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return simulate(system)
    whole, fewer = run("buckets=1024"), run("buckets=512", "buckets_used=273")
    assert whole.stats["client.misses"] == 0 and whole.status == "ok: client_done"
    assert fewer.stats["client.misses"] > 0 and fewer.status.startswith("ok: client_done; warning:")
