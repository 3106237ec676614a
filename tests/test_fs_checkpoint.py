"""Checkpoints of a booted full-system machine: written when the client's bulk load is over (Linux booted, /init's
server and eth0 up, every item stored), restored functionally (the measured phase's statistics equal the run that
booted) and in detailed mode (the timing models start at the checkpoint's time), every response checked. And the
measured phase's profile by PC (FullSystem.profile). Needs `make fs-image` (skipped without it)."""

from __future__ import annotations

import json
import shutil

import pytest

import configs
from models.errors import ConfigError
from models.params import ParamError
from models.sim import simulate
from tests.test_full_system import needs_image

ITEMS, REQUESTS = 256, 200


def fs_system(**kw):
    return configs.load("linux_fs").system(client=True, items=ITEMS, requests=REQUESTS, **kw)


def boot_to_checkpoint(tmp_path_factory, **kw):
    """A functional run that boots, loads, writes its checkpoint and goes on to measure: (checkpoint, result)."""
    where = tmp_path_factory.mktemp("fsck") / "booted"
    s = fs_system(**kw)
    s.checkpoint_to = str(where)
    return where, simulate(s)


@pytest.fixture(scope="module")
def booted(tmp_path_factory, engine):
    return boot_to_checkpoint(tmp_path_factory)


@needs_image
def test_a_booted_system_is_written_when_the_load_is_over(booted):
    where, r = booted
    assert r.stop_reason == "client_done"
    man = json.loads((where / "manifest.json").read_text())
    assert man["format"] == "kvsim-fs-checkpoint"
    # Taken after the boot (~30 ms of 1 GHz functional time) and the load, before the measured phase.
    assert 25_000_000 < man["insts"] < r.stats["system.insts"]
    assert r.stats["system.checkpoint.bytes"] == man["total_bytes"] + len((where / "manifest.json").read_bytes())
    state = json.loads((where / "state.json").read_text())
    assert b"eth0 up at 10.0.0.2" in bytes(state["machine"]["platform"]["uart"]["output"])


@needs_image
def test_a_functional_restore_measures_exactly_what_the_run_that_booted_measured(booted):
    where, first = booted
    s = fs_system()
    s.restore_from = str(where)
    s.client.warmup_requests = 0        # the run that loaded went straight on to measure
    r = simulate(s)
    assert r.stop_reason == "client_done"
    # Bit-identical: the kernel, the server, the device and the client go on from the same state.
    # (repr: a statistic that is NaN, as a p95 over too few batches, equals itself.)
    same = {k: repr(v) for k, v in first.stats.items() if not k.startswith("system.checkpoint")}
    assert {k: repr(v) for k, v in r.stats.items()} == same
    assert r.stats["client.responses_checked"] == ITEMS + REQUESTS


@needs_image
def test_a_detailed_restore_starts_its_timing_at_the_checkpoints_time_every_response_checked(booted, tmp_path):
    where, _ = booted
    s = fs_system(detailed=True, window=1)
    s.restore_from = str(where)
    s.client.warmup_requests = 50
    s.full_system.profile = str(tmp_path / "prof.txt")
    r = simulate(s)
    st = r.stats
    man = json.loads((where / "manifest.json").read_text())
    assert r.stop_reason == "client_done" and st["client.misses"] == 0
    assert st["client.responses_checked"] == ITEMS + 50 + REQUESTS
    assert st["system.timing.start_ticks"] == man["time_ps"]
    assert st["system.sim_ticks"] > man["time_ps"]
    # The profile counts exactly the measured phase's instructions, kernel and user.
    rows = [line.split() for line in (tmp_path / "prof.txt").read_text().splitlines()[1:]]
    insts = sum(int(n) for _, n, _ in rows)
    ps = sum(int(t) for _, _, t in rows)
    assert insts == pytest.approx(st["client.insts_per_request"] * REQUESTS, abs=0.5)
    assert any(int(pc, 16) >= 0xffffffff00000000 for pc, _, _ in rows) and any(int(pc, 16) < 1 << 32 for pc, _, _ in rows)
    # One request outstanding, the hart barely idle: the busy time per request is about its round trip (the wire
    # adds 0.2 us; the hart finishes one request's syscall return while the next is on the wire).
    assert ps / REQUESTS == pytest.approx(st["client.latency.mean"] * 1000, rel=0.2)


@needs_image
def test_a_restore_refuses_another_command_line_a_changed_page_file_or_an_se_checkpoint(booted, tmp_path):
    where, _ = booted
    s = fs_system()
    s.restore_from = str(where)
    s.full_system.bootargs += " quiet"
    with pytest.raises(ConfigError, match="System.full_system.bootargs is .* in the checkpoint"):
        simulate(s)
    bad = tmp_path / "bad"
    shutil.copytree(where, bad)
    with open(bad / "pages.bin", "r+b") as f:
        f.seek(4096 * 3 + 100)
        b = f.read(1)
        f.seek(4096 * 3 + 100)
        f.write(bytes([b[0] ^ 0xFF]))
    s = fs_system()
    s.restore_from = str(bad)
    with pytest.raises(ConfigError, match="pages.bin is corrupt"):
        simulate(s)
    se = tmp_path / "se"
    se.mkdir()
    (se / "manifest.json").write_text(json.dumps({"format": "kvsim-checkpoint", "format_version": 1}))
    s.restore_from = str(se)
    with pytest.raises(ConfigError, match="an SE-mode checkpoint"):
        simulate(s)


@pytest.fixture(scope="module")
def booted_tcp(tmp_path_factory, engine):
    """As `booted`, over the kernel's TCP: the checkpoint keeps the client's connections."""
    return boot_to_checkpoint(tmp_path_factory, transport="tcp")


@needs_image
def test_over_tcp_a_functional_restore_measures_exactly_what_the_run_that_booted_measured(booted_tcp):
    where, first = booted_tcp
    s = fs_system(transport="tcp")
    s.restore_from = str(where)
    s.client.warmup_requests = 0
    r = simulate(s)
    assert r.stop_reason == "client_done"
    # The connections go on in the same sequence space: every segment and response as in the run that booted.
    same = {k: repr(v) for k, v in first.stats.items() if not k.startswith("system.checkpoint")}
    assert {k: repr(v) for k, v in r.stats.items()} == same
    assert r.stats["client.responses_checked"] == ITEMS + REQUESTS
    assert r.stats["client.tcp.handshakes"] == r.stats["client.tcp.connections"] > 0


@needs_image
def test_over_tcp_a_detailed_restore_checks_every_response_and_refuses_another_connection_count(booted_tcp):
    where, _ = booted_tcp
    s = fs_system(transport="tcp", detailed=True, window=1)
    s.restore_from = str(where)
    s.client.warmup_requests = 20
    r = simulate(s)
    st = r.stats
    assert r.stop_reason == "client_done" and st["client.misses"] == 0
    assert st["client.responses_checked"] == ITEMS + 20 + REQUESTS
    assert st["system.timing.start_ticks"] == json.loads((where / "manifest.json").read_text())["time_ps"]
    s = fs_system(transport="tcp")
    s.client.tcp_connections += 1
    s.restore_from = str(where)
    with pytest.raises(ConfigError, match="tcp_connections"):
        simulate(s)


def test_fs_checkpoints_that_cannot_be_kept_are_refused_before_running():
    s = fs_system(detailed=True)
    s.checkpoint_to = "/nonexistent/x"
    with pytest.raises(ParamError, match="boot functionally, then restore in detailed mode"):
        s.validate()
    s = configs.load("linux_fs").system()
    s.checkpoint_to = "/nonexistent/x"
    with pytest.raises(ParamError, match="needs System.client.enabled"):
        s.validate()
    s = configs.load("linux_fs").system()
    s.full_system.profile = "/tmp/x"
    with pytest.raises(ParamError, match="profile counts the client's measured phase"):
        s.validate()
