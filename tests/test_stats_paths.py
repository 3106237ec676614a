"""The statistics paths declared once (models/stats_paths.py) against what the engine writes, and the power model
reading through them (power/activity.py).

Short real runs of six platforms (one socket on a mesh, the Xeon's ring with private L2s, Mercury's 3D DRAM stack with
its on-die MAC, four sockets with their links (also under the partitioned schedule), KeyVault's zero-copy NIC behind its
switch, Iridium's flash stack with the MAC's SRAM, a TCP client, a fuzzing client), one run that writes a checkpoint and
one FS-mode run in detail together write every declared counter; every counter they write is declared (but the power
model's own `power.*` and the buckets of the NIC's batch-size and the fuzzer's result-code histograms). The engine's and
the timing model's Rust sources spell no statistics path: they build each from `kvsim_params::paths`."""

from __future__ import annotations

import pathlib
import re

import pytest
import rust_source
from rust_source import ROOT

import configs
import power
from models import stats_paths as paths
from models.sim import simulate
from power.activity import MissingCounters

RUNS = {
    "kvs_default": lambda: configs.load("kvs_default").system(harts=2, requests=1000, items=4096),
    "xeon": lambda: configs.load("xeon_e5_2697v2_socket").system(cores=2, requests=1000, items=4096),
    "mercury": lambda: configs.load("mercury").system(cores=2, requests=500, items=4096),
    "quad": lambda: configs.load("brps_target_quad").system(cores_per_socket=2, requests=800, items=4096),
    # The partitioned schedule lists each link's messages per kind.
    "quad_partitioned": lambda: _partitioned(configs.load("brps_target_quad").system(cores_per_socket=2, requests=400,
                                                                                      items=2048)),
    "keyvault": lambda: configs.load("keyvault").system(cores=2, requests=300, items=2048),
    "iridium": lambda: configs.load("iridium").system(cores=2, requests=300, items=2048),
    "sampled": lambda: _sampled(configs.load("kvs_default").system(harts=2, requests=1000, items=4096)),
    "mercury_tcp": lambda: configs.load("mercury").system(cores=1, store_mem="4MiB", transport="tcp", requests=300,
                                                          items=1024),
    "fuzz": lambda: configs.load("kvs_default").system(harts=1, requests=300, items=1024, fuzz_frames=200, seed=11),
}
# Buckets of a histogram: the NIC's packets per poll, the client's fuzz entries per result code.
HISTOGRAM_BUCKET = re.compile(r"system\.nic\d+\.rx_batch_size::\d+|client\.fuzz\.result\d+")


def _partitioned(system):
    system.schedule = "partitioned"
    return system


def _sampled(system):
    system.sampling.enabled = True
    system.sampling.period_insts_per_hart = 4000
    return system


def _full_system(tmp: pathlib.Path):
    """FS mode in detail: the bare-metal privilege test of workloads/fs/bare/ runs code at all three levels."""
    import os
    import subprocess

    from models import System
    from models.full_system import FullSystem

    subprocess.run(["bash", str(rust_source.ROOT / "workloads" / "fs" / "bare" / "build.sh")], check=True,
                   env={**os.environ, "FS_OUT": str(tmp)})
    return System(harts=1, os_level="fs", mode="detailed",
                  full_system=FullSystem(kernel=str(tmp / "bare" / "privmmu"), entry="machine"))


# FS mode's client run needs the Linux image of `make fs-image`; without it the counters only a client run writes
# (the wire's: ARP replies, other frames, when the device came up) cannot be checked here.
FS_IMAGE = rust_source.ROOT / "workloads" / "fs" / "build" / "initramfs.cpio"
FS_CLIENT_ONLY = ("arp_replies", "other_frames", "up_ticks")


def _full_system_client():
    """FS mode with the ghost client: Linux serves memcached over virtio-net."""
    return configs.load("linux_fs").system(client=True, items=64, requests=50)


def _checkpointing(tmp: pathlib.Path):
    system = configs.load("kvs_default").system(harts=1, requests=200, items=1024)
    system.checkpoint_to = str(tmp / "checkpoint")
    return system


@pytest.fixture(scope="module")
def runs(engine, tmp_path_factory):
    out = {}
    tmp = tmp_path_factory.mktemp("stats_paths")
    extra = [("checkpoint", lambda: _checkpointing(tmp)), ("fs", lambda: _full_system(tmp))]
    if FS_IMAGE.is_file():
        extra.append(("fs_client", _full_system_client))
    for name, make in [*RUNS.items(), *extra]:
        system = make()
        result = simulate(system)
        done = result.stats.get("client.requests", 0) > 0 if system.client.enabled else result.exit_code == 0
        assert done, name
        out[name] = (dict(result.stats), system.to_dict())
    return out


def test_the_engine_writes_every_declared_counter(runs):
    written = set().union(*(stats for stats, _ in runs.values()))
    never = [f"{g.pattern}.{c}" if g.pattern else c for g in paths.GROUPS.values() for c in g.counters
             if not any(map(g.regex(c).fullmatch, written))]
    if not FS_IMAGE.is_file():
        unchecked = [f"system.fs.net.{c}" for c in FS_CLIENT_ONLY]
        never = [n for n in never if n not in unchecked]
        print(f"without `make fs-image` these FS client counters are not checked: {unchecked}")
    assert never == [], f"declared in models/stats_paths.py but written by none of {list(runs)}: {never}"


def test_every_counter_the_engine_writes_is_declared(runs):
    rxs = [g.regex() for g in paths.GROUPS.values()]
    for name, (stats, _) in runs.items():
        undeclared = sorted(k for k in stats if not k.startswith("power.") and not HISTOGRAM_BUCKET.fullmatch(k)
                            and not any(rx.fullmatch(k) for rx in rxs))
        assert undeclared == [], f"{name} writes statistics models/stats_paths.py does not declare: {undeclared}"


def test_paths_name_the_tree():
    assert paths.CORE.stat(1, 17, "ipc") == "system.socket1.core17.ipc"
    assert paths.PRIVATE_CACHE.stat(0, 3, "l1d", "misses") == "system.socket0.core3.l1d.misses"
    assert paths.LINK.stat(0, 3, 4, "flits") == "system.socket0.noc.link3_4.flits"
    assert paths.SOCKET_LINK.stat(0, 1, "bytes") == "system.link0_1.bytes"
    assert paths.RUN.stat("sim_seconds") == "sim_seconds"
    with pytest.raises(KeyError, match="declares no counter 'flitz'; it has: avg_hops, flits, hops"):
        paths.NOC.stat(0, "flitz")
    stats = {"system.socket0.core0.ipc": 1.0, "system.socket0.core2.ipc": 2.0, "system.socket1.core0.ipc": 3.0}
    assert paths.CORE.instances(stats, "ipc", socket=0) == [(0, 0), (0, 2)]
    assert paths.CORE.values(stats, "ipc") == [1.0, 2.0, 3.0]


def test_the_rust_paths_are_generated_from_the_declaration():
    from models import codegen

    rust = codegen.render_paths()
    assert 'pub fn socket(socket: usize) -> String {\n    format!("system.socket{socket}.")' in rust
    assert 'pub fn core(core: usize) -> String {\n    format!("core{core}.")' in rust
    assert 'pub fn channel(channel: usize) -> String {\n    format!("channel{channel}.")' in rust
    assert 'pub fn link(src: usize, dst: usize) -> String {\n    format!("link{src}_{dst}.")' in rust
    assert 'pub fn router(router: usize) -> String {\n    format!("router{router}.")' in rust
    for group in paths.GROUPS.values():
        if group.pattern:
            assert f"pub fn {group.name}(" in rust


# ---- the power model reads through the declaration --------------------------------------------------------------

def test_the_xeon_rings_flits_are_priced(runs):
    stats, config = runs["xeon"]
    assert stats[paths.NOC.stat(0, "flits")] > 0
    assert power.price_run(stats, config).stats()["power.noc.runtime_dynamic_W"] > 0


def test_mercurys_stack_accesses_are_priced(runs):
    stats, config = runs["mercury"]
    accesses = sum(paths.STACK_PORT.values(stats, "reads") + paths.STACK_PORT.values(stats, "writes"))
    assert accesses > 0
    priced = power.price_run(stats, config).stats()
    idle = dict(stats)
    for k in [k for k in stats if paths.STACK_PORT.regex().fullmatch(k)]:
        idle[k] = 0.0
    unused = power.price_run(idle, config).stats()
    assert priced["power.dram.runtime_dynamic_W"] > unused["power.dram.runtime_dynamic_W"] > 0
    assert priced["power.mc.runtime_dynamic_W"] > unused["power.mc.runtime_dynamic_W"]


@pytest.mark.parametrize("run,counter,component", [
    ("xeon", "system.socket0.noc.flits", "on-chip network (ring) of socket 0"),
    ("xeon", "system.socket0.core1.l2.read_misses", "core 1 of socket 0"),
    ("mercury", "system.socket0.mem.port3.writes", "3D-stacked DRAM of socket 0"),
    ("kvs_default", "system.socket0.mem.channel0.activates", "DDR memory of socket 0"),
    ("kvs_default", "system.nic0.pcie.tlps", "NIC 0"),
])
def test_a_missing_counter_is_an_error_naming_it(runs, run, counter, component):
    stats, config = runs[run]
    del (stats := dict(stats))[counter]
    with pytest.raises(MissingCounters, match=re.escape(component) + ".*" + re.escape(counter)):
        power.price_run(stats, config)


def test_a_flash_stacks_controller_traffic_is_counted(runs):
    stats, config = runs["iridium"]
    from power.activity import from_stats
    from power.from_config import platform_from_config

    act = from_stats(stats, platform_from_config(config))
    assert act.dram.reads == sum(paths.FLASH_CONTROLLER.values(stats, "reads")) > 0
    assert act.dram.activates == 0                      # no DRAM rows in a flash stack


def test_a_four_socket_run_is_priced_from_the_machine_wide_directory(runs):
    stats, config = runs["quad"]
    assert paths.SYSTEM_DIRECTORY.stat("gets") in stats and paths.DIRECTORY.stat(0, "gets") not in stats
    priced = power.price_run(stats, config)
    assert priced.stats()["power.warnings.missing_stats"] == 0
    assert all(r.stats()["power.socket.runtime_dynamic_W"] > 0 for r in priced.sockets)


# ---- the Rust sources build every statistics path from the declaration ------------------------------------------

RUST_SOURCES = [ROOT / "models" / "timing" / "src", *sorted((ROOT / "models" / "engine").glob("*/src"))]
# The words a name field stands for (private_cache's {cache}, tlb's {tlb} and {page}).
NAME_VALUES = {"cache": ("l1i", "l1d", "l2"), "tlb": ("itlb", "dtlb", "stlb"), "page": ("4k", "2m"),
               "level": paths.PRIVILEGE_LEVELS}
# Literals that look like statistics paths but are not: the configuration keys a checkpoint's restore must agree on.
NOT_STATISTICS = {"models/engine/engine/src/checkpoint.rs": {
    "client.enabled", "client.items", "client.dataset", "client.key_size", "client.value_size", "client.mode",
    "client.seed", "client.bulk_load", "client.fuzz_frames"},
    # Configuration parameters an FS checkpoint's restore must agree on.
    "models/engine/engine/src/fs_checkpoint.rs": {"client.protocol", "client.transport", "client.tcp_connections",
                                                  "client.tcp_mss"}}


def _production_literals() -> list[tuple[str, int, str]]:
    """(file, line, text) of every string literal in the engine's and the timing model's non-test Rust code."""
    found = []
    for src in RUST_SOURCES:
        for path, toks in rust_source.crate_sources(src).items():
            rel = str(path.relative_to(ROOT))
            found += [(rel, line, text) for kind, text, line in toks if kind == "str"]
    return sorted(found)


def _segment_patterns() -> re.Pattern:
    """One part of a declared path between dots (`core{core}`, `llc`, `l1d`), with its fields as a format
    placeholder or digits."""
    alternatives = set()
    for g in paths.GROUPS.values():
        for part in filter(None, g.pattern.split(".")):
            text, pos = "", 0
            for m in re.finditer(r"\{(\w+)\}", part):
                text += re.escape(part[pos:m.start()])
                field = m.group(1)
                text += ("(?:" + "|".join(NAME_VALUES[field]) + ")") if field in g.names \
                    else r"(?:\{[^{}]*\}|\d+)"
                pos = m.end()
            alternatives.add(text + re.escape(part[pos:]))
    return re.compile("|".join(sorted(alternatives)))


def literal_statistics_paths() -> list[str]:
    """The string literals of the Rust sources that spell out a part of a statistics path next to a dot
    (`"system.hart{}.insts"`, `"{prefix}llc."`, `"{name}.pcie.tlps"`): each should come from `kvsim_params::paths`."""
    segment = _segment_patterns()
    bad = []
    for rel, line, text in _production_literals():
        # A statistics path has no spaces (messages that name parameters, such as System.nic.enabled, do).
        if "." not in text or re.search(r"\s", text) or text in NOT_STATISTICS.get(rel, ()):
            continue
        parts = text.split(".")
        # A part may start with placeholders that stand for the prefix it is appended to (`{prefix}core{i}`).
        if any(segment.fullmatch(re.sub(r"^(?:\{[^{}]*\})+", "", p)) for p in parts):
            bad.append(f"{rel}:{line}: {text!r}")
    return bad


def test_the_rust_sources_spell_no_statistics_path():
    bad = literal_statistics_paths()
    assert bad == [], ("statistics paths spelled out in the Rust sources; build them from kvsim_params::paths "
                       "(declared in models/stats_paths.py):\n" + "\n".join(bad))


def test_the_literal_path_check_finds_them():
    segment = _segment_patterns()
    assert segment.fullmatch("core{i}") and segment.fullmatch("slice3") and segment.fullmatch("l1d")
    assert not segment.fullmatch("rx_batch_size::{name}") and not segment.fullmatch("up_bytes")
    tokens = rust_source.tokens('let a = "system.hart{}.insts"; // "llc.misses"\n#[cfg(test)]\nmod tests { fn f() { "mem.x"; } }\n'
                     "let c = '\"'; let d = r\"{prefix}noc.\";")
    kept, _ = rust_source.without_test_items(tokens)
    assert [t for k, t, _ in kept if k == "str"] == ["system.hart{}.insts", "{prefix}noc."]
