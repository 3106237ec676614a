"""FS mode's open loop (sim-scripts/fs_capacity.py's probes): a datagram the kernel drops is reported by no device,
so frames still unanswered once the guest has fallen idle, with nothing left on the wire or in the device, count as
lost. A guest still working through a backlog is not idle: on Iridium (memory behind the caches is flash at 20 us)
no response left within 5 ms of a probe's last frame, and a rule of a fixed silence (session 12's 5 ms) counted
every frame of such a probe lost. Needs `make fs-image`."""
from __future__ import annotations

import argparse

from drivers import sim_script
from models.sim import simulate
from tests.test_full_system import needs_image

REQUESTS = 300


def probe(tmp_path, platform: str, mpps: float):
    fsc = sim_script.load("fs_capacity")
    args = argparse.Namespace(latency="10ns", flash_read="20us", items=1024, value_size=64)
    boot = fsc.fs_system(platform, 1, args, 1, detailed=False)
    boot.checkpoint_to = str(tmp_path / "booted")
    simulate(boot)
    s = fsc.fs_system(platform, 1, args, REQUESTS, detailed=True)
    s.restore_from = boot.checkpoint_to
    s.client.warmup_requests = 50
    s.client.offered_mpps = mpps
    r = simulate(s)
    assert r.stop_reason == "client_done"
    return r.stats


@needs_image
def test_a_backlog_still_being_served_is_not_counted_lost(engine, tmp_path):
    st = probe(tmp_path, "iridium-a7", 0.05)          # ~10x what one A7 over flash serves
    answered, lost = st["client.hits"], st["client.lost_requests"]
    assert answered + lost == REQUESTS, "every measured GET is answered or lost"
    assert answered > 0, "the guest answers part of its backlog"
    assert lost > 0, "and its ring and socket buffer drop the rest"
    assert st["client.misses"] == 0


@needs_image
def test_a_load_the_guest_sustains_loses_nothing(engine, tmp_path):
    st = probe(tmp_path, "mercury-a7", 0.01)          # a third of one A7's capacity
    assert (st["client.hits"], st["client.lost_requests"]) == (REQUESTS, 0)
