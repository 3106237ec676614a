"""sim-scripts/xeon_rx_batch.py: a saved one-port Xeon run's batch sizes, write-back groups and time a batch."""

from __future__ import annotations

import json

import pytest

from drivers.cli import xeon_rx_batch as xb


def _run(group: int = 4) -> tuple[dict[str, float], dict]:
    """Two cores of 2 GHz, 100 batches: 90 of 4 frames and 10 of 8 (440 frames), 1 ms measured."""
    s = {f"system.nic0.rx_batch_size::{n}": 0.0 for n in range(33)}
    s.update({"system.nic0.rx_batch_size::0": 500.0, "system.nic0.rx_batch_size::4": 90.0,
              "system.nic0.rx_batch_size::8": 10.0, "system.nic0.rx_batch_size::more": 0.0,
              "system.nic0.rx_writebacks_per_frame": 0.25})
    for q, (batches, frames) in enumerate([(50, 220), (50, 220)]):
        s.update({f"system.nic0.queue{q}.rx_batches": batches, f"system.nic0.queue{q}.rx_frames": frames})
        s.update({f"system.socket0.core{q}.cycles": 2e6, f"system.socket0.core{q}.idle_poll_cycles": 2e5})
    return s, {"nics": [{"rx_wb_threshold": group}], "core": {"clock": 2e9}}


def test_batch_shares_and_time_a_batch():
    f = xb.batch_figures(*_run())
    assert f["batch"] == pytest.approx(4.4) and f["share_4"] == pytest.approx(0.9) and f["share_8"] == 0.1
    assert "share_0" not in f                       # an empty poll is not a batch
    assert f["cycles_per_batch"] == pytest.approx(4e6 / 100) and f["busy_cycles_per_batch"] == pytest.approx(3.6e6 / 100)
    # 220 frames a queue in 1 ms: 0.22 M frames/s; a group of 4 in 4 / 0.22e6 s = 36,364 cycles at 2 GHz.
    assert f["queue_mpps"] == pytest.approx(0.22) and f["group_arrival_cycles"] == pytest.approx(4 / 0.22e6 * 2e9)


def test_a_group_of_one_arrives_in_a_quarter_of_the_time():
    assert xb.batch_figures(*_run(1))["group_arrival_cycles"] == pytest.approx(xb.batch_figures(*_run(4))[
        "group_arrival_cycles"] / 4)


def test_missing_histogram_or_several_nics_are_errors():
    s, c = _run()
    with pytest.raises(KeyError, match="rx_batch_size"):
        xb.batch_figures({k: v for k, v in s.items() if "rx_batch_size" not in k}, c)
    with pytest.raises(SystemExit, match="one-NIC"):
        xb.batch_figures(s, {**c, "nics": c["nics"] * 2})


def test_main_reads_a_saved_point(tmp_path, capsys):
    s, c = _run()
    (tmp_path / "stats.json").write_text(json.dumps(s))
    (tmp_path / "config.json").write_text(json.dumps(c))
    assert xb.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "RX batch 4.400" in out and "4: 90.0%" in out and "8: 10.0%" in out
    with pytest.raises(SystemExit, match="missing"):
        xb.main([str(tmp_path / "nothing")])


def _replay(F: float, S: float, group: int = 4, frames: int = 4000) -> float:
    return xb.replay_batch(F, S, group=group, queues=3, port_mfps=12.0, clock=2.7e9, timer_s=2e-6, idle_cycles=26,
                           frames_per_queue=frames)


def test_replay_batches_come_in_write_back_groups():
    """A core far faster than its queue finds one group a poll: batches of the group; a core far slower finds the
    32 a poll allows; a slower core (more time a batch or a request) finds larger batches in between."""
    assert _replay(10, 10) == pytest.approx(4.0, abs=0.01)
    assert _replay(10, 10, group=1) == pytest.approx(1.0, abs=0.01)
    assert _replay(1e6, 10) == pytest.approx(32.0, abs=0.5)
    assert _replay(820, 404) < _replay(1200, 404) < _replay(1600, 404)
    assert _replay(820, 404) < _replay(820, 460)
    assert _replay(820, 404) == _replay(820, 404)          # deterministic for a seed
    with pytest.raises(ValueError, match="take time"):
        xb.replay_batch(820, 404, group=4, queues=3, port_mfps=12.0, clock=2.7e9, timer_s=2e-6, idle_cycles=0)


def test_split_and_solve():
    """Two runs' busy cycles a batch at batches 32 and 4 give back a planted F and S; the bisection finds the F at
    which a replay increasing in F meets the target, with F + 32 S fixed."""
    F, S = 800.0, 400.0
    one = {"batch": 32.0, "busy_cycles_per_batch": F + 32 * S}
    three = {"batch": 4.0, "busy_cycles_per_batch": F + 4 * S}
    assert xb.split(one, three) == pytest.approx((F, S))
    Fp, Sp, k = xb.solve_published(lambda f, s: 4.0 + f / 1000.0, 14000.0, 5.29)
    assert Fp == pytest.approx(1290.0, abs=0.01) and Fp + 32 * Sp == pytest.approx(14000.0) and k == pytest.approx(5.29)
