"""The random-configuration soak (drivers/soak.py): its draws come from the declared ranges and are reproducible,
its watchdog stops a run that does not finish, a short fixed-seed soak finds nothing, and what it found once is
refused before any run."""

from __future__ import annotations

import random
import time

import pytest

import configs
from drivers import soak
from models.params import ParamError
from models.system import System


def declared(path: str):
    obj = System()
    *parents, leaf = path.split(".")
    for part in parents:
        obj = getattr(obj, part)
    return type(obj)._params[leaf]


def test_draws_come_from_the_declared_ranges_and_a_seed_repeats_them():
    def draws(seed):
        rng = random.Random(seed)
        return [soak.draw_valid(rng)[0] for _ in range(20)]

    specs = draws(5)
    assert specs == draws(5) and specs != draws(6)
    changed = set()
    for spec in specs:
        soak.build(spec)                                           # every draw is valid
        for path, value in spec["set"]:
            param = declared(path)
            changed.add(path.split(".")[0])
            if param.choices:
                assert value in param.choices, (path, value)
            elif param.kind != "bool":
                assert param.min is None or value >= param.min, (path, value)
                assert param.max is None or value <= param.max, (path, value)
            assert path not in soak.LEFT_ALONE
    assert {"core", "caches", "noc", "memory", "nic", "client"} <= changed
    assert any(s["checkpoint"] for s in specs) and {s["base"] for s in specs} == set(soak.BASES)


def test_the_watchdog_stops_a_run_that_does_not_finish(tmp_path, monkeypatch):
    """A child that never reports an instruction (here a stand-in interpreter that only sleeps) is a hang, killed
    with its process group after the watchdog's period."""
    stuck = tmp_path / "stuck-python"
    stuck.write_text("#!/bin/sh\nexec sleep 60\n")
    stuck.chmod(0o755)
    monkeypatch.setattr(soak.sys, "executable", str(stuck))
    spec = soak.draw_valid(random.Random(1))[0]
    started = time.monotonic()
    record = soak.run_child(spec, timeout=0.3)
    assert record["outcome"] == "hang" and "no instruction for 0.3 s (watchdog" in record["error"]
    assert time.monotonic() - started < 10


def test_a_short_fixed_seed_soak_finds_nothing(engine, tmp_path):
    """CI's soak: about a minute of configurations from seed 1 (make soak runs it for longer)."""
    records = soak.soak(seed=1, minutes=1.0, out=tmp_path, timeout=45, log=lambda line: None)
    assert len(records) >= 5
    failures = [(r["n"], r["outcome"], r["error"], r["spec"]) for r in records if r["outcome"] not in ("ok", "slow")]
    assert not failures, failures
    assert (tmp_path / "soak.jsonl").read_text().count("\n") == len(records)


# What the soak found (each ran before it was refused), now ParamErrors before any run.

def test_a_refresh_interval_shorter_than_a_refresh_is_refused():
    """tREFI 135 ns under DDR4's 350 ns tRFC: the ranks refreshed for ever and the run hung (soak seed 1, #18)."""
    system = configs.load("kvs_default").system()
    system.memory.t_refi = 134944
    with pytest.raises(ParamError, match=r"System.memory.t_refi = 134944 ps is not longer than System.memory.t_rfc "
                                         r"= 350000 ps"):
        system.validate()


def test_a_closed_loop_window_beyond_the_rx_fifo_is_refused():
    """3 queues x 32 frames outstanding on one port with a 35-frame RX FIFO: the NIC dropped load frames and the
    closed-loop client, which never retransmits, stalled until stall_rounds failed the run (soak seed 1, #2)."""
    system = configs.load("kvs_functional").system(harts=3)
    system.nic.rx_fifo_frames = 35
    with pytest.raises(ParamError, match=r"Client.window = 32 frames per queue x 3 queues on port 0 of System.nic "
                                         r"exceeds its System.nic.rx_fifo_frames = 35.*lower Client.window to 11"):
        system.validate()
    system.client.window = 11
    system.validate()
    system.client.window, system.client.offered_mpps = 32, 1.0    # open loop: drops are loss, not failures
    system.validate()


def test_fewer_nic_queues_than_harts_is_refused_before_the_run():
    """4 harts, 2 queues: the engine refused it only once the run started (soak seed 1, #5)."""
    system = configs.load("kvs_default").system(harts=4)
    system.nic.queues = 2
    with pytest.raises(ParamError, match=r"System.nics: 2 NIC queues in all but the client needs a queue for every hart "
                                         r"\(System.harts = 4\)"):
        system.validate()


def test_a_stall_window_shorter_than_the_nics_round_trip_is_refused():
    """88 us of PCIe latency each way with System.quantum = 1: the client's 100,000-round stall window is 13 us
    of simulated time, so a healthy run failed as 'no response' (soak seed 7, #164)."""
    system = configs.load("kvs_default").system(harts=1)
    system.quantum = 1
    system.client.stall_rounds = 300_000                          # enough instructions for a burst of frames
    system.nic.pcie_latency = "88us"
    with pytest.raises(ParamError, match=r"Client.stall_rounds = 300000 rounds of System.quantum = 1 instructions "
                                         r"last at least 40.0 us of simulated time.*System.nic \(88.1 us each way"):
        system.validate()
    system.client.stall_rounds = 3_000_000
    system.validate()


def test_a_stall_window_shorter_than_a_burst_of_the_servers_work_is_refused():
    """System.quantum = 1 in a functional run: 100,000 rounds are 100,000 instructions per hart, less than the
    server spends on a burst of 32 frames of 3 requests, so a healthy run failed as 'no response' (soak seed 11,
    #140)."""
    system = configs.load("kvs_functional").system(harts=3, requests_per_packet=3)
    system.quantum = 1
    with pytest.raises(ParamError, match=r"Client.stall_rounds = 100000 rounds of System.quantum = 1 instructions "
                                         r"per hart are fewer than the 768,000 a server may spend on one burst"):
        system.validate()
    system.client.stall_rounds = 768_000
    system.validate()
