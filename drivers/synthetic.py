"""Synthetic stand-ins for a simulated server, for testing the drivers without simulating.

They are deterministic functions of their inputs, so the tests can state the right answer exactly: a server whose
loss as a function of offered load is known (`QueueServer`), and a sweep evaluator (`evaluate_point`) that turns a
resolved configuration into statistics, sleeping a little so a sweep can be interrupted mid-way.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Any

from models import stats_paths as paths

from .capacity import BACKLOG, DROP, Outcome


@dataclass
class QueueServer:
    """A server that answers at most `capacity_mpps` frames/s per port and drops the rest, with a fraction
    `background_loss` lost at any load (e.g. a lossy link) and a soft knee of relative width `knee` below capacity
    where loss rises smoothly. Its highest load with loss < max_loss is then known in closed form."""
    capacity_mpps: float
    background_loss: float = 0.0
    knee: float = 0.0

    def __call__(self, offered: float) -> Outcome:
        answered = min(offered, self.capacity_mpps)
        if self.knee > 0 and offered > self.capacity_mpps * (1 - self.knee):
            # Loss grows quadratically through the knee, reaching the overload shortfall at capacity.
            x = min(1.0, (offered - self.capacity_mpps * (1 - self.knee)) / (self.capacity_mpps * self.knee))
            answered = min(answered, offered * (1 - 0.05 * x * x))
        loss = 1 - (1 - self.background_loss) * answered / offered
        return Outcome(loss, answered * (1 - self.background_loss))

    def threshold(self, max_loss: float) -> float:
        """The exact highest offered load with loss < max_loss (without a knee)."""
        assert self.knee == 0
        return self.capacity_mpps * (1 - self.background_loss) / (1 - max_loss)


@dataclass
class BacklogServer:
    """A short run of a server that serves `capacity_mpps` frames/s per port and drops nothing: what it cannot
    serve waits in its queues, so its loss is the latency-corrected shortfall of `outcome_from_stats` under
    BACKLOG's law, (x - C) / (x + C). Overload costs it work: a backlog larger than its caches slows it by a fraction
    `slowdown` of its rate as the share of excess load, 1 - C / x, grows (the saturating probe then under-states its
    capacity, as a real short run does). Each answered rate is over a span that holds one unloaded round trip,
    `round_trip` of the run's length at capacity."""
    capacity_mpps: float
    slowdown: float = 0.0
    round_trip: float = 0.05

    def served(self, offered: float) -> float:
        c = self.capacity_mpps
        return min(offered, c * (1 - self.slowdown * max(0.0, 1 - c / offered)))

    def __call__(self, offered: float) -> Outcome:
        served = self.served(offered)
        loss = (offered - served) / (offered + served)
        # requests over the span: the time to serve them all plus one round trip
        answered = 1 / (1 / served + self.round_trip / self.capacity_mpps)
        return Outcome(loss, answered, law=BACKLOG)

    def threshold(self, max_loss: float) -> float:
        """The highest offered load with loss < max_loss, by bisection (the loss is monotonic in the load)."""
        low, high = self.capacity_mpps * (1 - self.slowdown), self.capacity_mpps * 2
        for _ in range(200):
            mid = (low + high) / 2
            low, high = (mid, high) if self(mid).loss < max_loss else (low, mid)
        return low


@dataclass
class SkewedServer:
    """A server of several cores, each serving its own queue at `core_mpps` frames/s (per port of the offered
    load) and dropping what it cannot serve, offered the load in the uneven `shares` (skewed keys, each key owned
    by one core): the busiest core saturates first, and the loss rises as each core past it saturates in turn.
    `slowdown` under-states what an overloaded core serves (a backlog beyond its caches), as BacklogServer's.

    `paced`: the cores' queues share one inlet that passes frames at the pace of the hottest queue (a NIC whose RX
    FIFO holds the next frame until its queue has room): once the hottest core is past its rate, every core serves
    its share of what passes, and the loss is 1 - X / x, X the load at which the hottest core saturates. So a
    deeply overloaded run's cores serve in proportion to their shares, as the reduced 8-core Zipf point's saturated
    probe did (session 24: each core's rate over its share 10.0-11.6 M frames/s a port): read as cores of equal
    rates, its served rate predicts about 1 / (cores x the hottest share) of the threshold. Each run reports every
    core's served rate (`Outcome.core_rates`)."""
    core_mpps: float
    shares: tuple[float, ...]
    slowdown: float = 0.0
    paced: bool = False

    def __post_init__(self):
        total = sum(self.shares)
        self.shares = tuple(s / total for s in self.shares)

    def _rate(self, load: float) -> float:
        return self.core_mpps * (1 - self.slowdown * max(0.0, 1 - self.core_mpps / load))

    def core_served(self, offered: float) -> tuple[float, ...]:
        if self.paced:
            hot = max(self.shares)
            passed = min(offered, self._rate(offered * hot) / hot)
            return tuple(s * passed for s in self.shares)
        return tuple(min(offered * s, self._rate(offered * s)) for s in self.shares)

    def served(self, offered: float) -> float:
        return sum(self.core_served(offered))

    def __call__(self, offered: float) -> Outcome:
        rates = self.core_served(offered)
        served = sum(rates)
        return Outcome(1 - served / offered, served, shares=self.shares, core_rates=rates)

    def threshold(self, max_loss: float) -> float:
        """The highest offered load with loss < max_loss, by bisection (the loss is monotonic in the load)."""
        low, high = 1e-9, self.core_mpps * len(self.shares) * 2
        for _ in range(200):
            mid = (low + high) / 2
            low, high = (mid, high) if self(mid).loss < max_loss else (low, mid)
        return low


@dataclass
class WindowedServer:
    """A server whose loss depends on how long a run is, as the simulated ones' did at 192 Mi items
    (drivers/window_capacity.py): it serves at most `capacity_mpps` frames/s a port; what it cannot serve first
    fills a buffer of `buffer` frames (the RX rings) and is dropped only once that is full, so a short run hides an
    overload the buffer absorbs; and every run loses `startup` frames at its start (queues filling from empty),
    more as the load nears capacity (x `offered / capacity_mpps`, at most 1), so a short run's loss near capacity is start-up
    loss. `probe_frames` and `window_frames` are the frames a capacity probe and a steady-state window send.
    Its busiest core answers at min(offered, capacity) (the service rate once overloaded); its load factor (busy
    time over the time the load was offered) is the frames it served, at its capacity, over that time."""
    capacity_mpps: float
    buffer: float = 0.0
    startup: float = 0.0
    probe_frames: float = 300.0
    window_frames: float = 6000.0

    def loss(self, offered: float, frames: float) -> float:
        excess = frames * max(0.0, 1 - self.capacity_mpps / offered)
        dropped = max(0.0, excess - self.buffer) + self.startup * min(offered, self.capacity_mpps) / self.capacity_mpps
        return min(1.0, dropped / frames)

    def load_factor(self, offered: float, frames: float) -> float:
        """Served frames x 1 / capacity over frames / offered: a dropped frame costs no service time."""
        return offered * (1 - self.loss(offered, frames)) / self.capacity_mpps

    def __call__(self, offered: float) -> Outcome:
        """A capacity probe."""
        loss = self.loss(offered, self.probe_frames)
        return Outcome(loss, offered * (1 - loss))

    def window(self, offered: float, service: float | None = None):
        """A steady-state window, judged (drivers/window_capacity.Judged); `service` is not used (the judge's)."""
        from .window_capacity import Judged

        loss = self.loss(offered, self.window_frames)
        return Judged(offered, loss, offered * (1 - loss), min(offered, self.capacity_mpps),
                      load_factor=self.load_factor(offered, self.window_frames), dropped=loss * self.window_frames)

    def threshold(self, max_loss: float, frames: float) -> float:
        """The highest offered load whose run of `frames` frames loses < max_loss (bisection: monotonic)."""
        low, high = self.capacity_mpps * 1e-3, self.capacity_mpps * 4
        for _ in range(200):
            mid = (low + high) / 2
            low, high = (mid, high) if self.loss(mid, frames) < max_loss else (low, mid)
        return low


@dataclass
class HotCoreWindowedServer:
    """A skewed server's steady-state windows as the 60-core target socket's showed them under Zipf keys (session
    19, results/speed/skew_loss_s19.md): one hot core takes `hot_share` of the frames (the others an even share of
    the rest) and saturates at `saturates_mpps` frames/s a port; no window drops a frame, and its loss is what the
    capacity rule reads off the answered rate over the window's span (BACKLOG's law): once the hot core is
    overloaded, its backlog is drained after the last frame was sent while the rate is taken as every core's, so
    the loss is the hot core's excess over its own load, 1 - 1 / load factor, not its part of all frames. The
    busiest core's load factor (busy time over the time the load was offered) is offered / saturates_mpps, and it
    answers at min(offered, saturates_mpps) in offered-load units."""
    saturates_mpps: float
    hot_share: float
    cores: int = 60

    def shares(self) -> tuple[float, ...]:
        return (self.hot_share,) + ((1 - self.hot_share) / (self.cores - 1),) * (self.cores - 1)

    def loss(self, offered: float) -> float:
        return max(0.0, 1 - self.saturates_mpps / offered)

    def window(self, offered: float, service: float | None = None):
        """A steady-state window, judged (drivers/window_capacity.Judged); `service` is not used (the judge's)."""
        from .window_capacity import Judged

        loss = self.loss(offered)
        return Judged(offered, loss, offered * (1 - loss), min(offered, self.saturates_mpps), BACKLOG,
                      self.shares(), load_factor=offered / self.saturates_mpps, dropped=0.0)


@dataclass
class TransientBacklogServer:
    """A server whose short windows end with a transient backlog and drop nothing, as the 60-core target socket's did
    near its Zipf capacity (session 19, results/speed/skew_loss_s19.md): it serves `capacity_mpps` frames/s a port
    over a long run; every window ends with about `backlog` frames still queued, more as the load nears capacity (x
    (offered / capacity)^`steepness`, at most 1), drained after the last send and read by the capacity rule as loss,
    so that share falls as 1 / the window's frames. Above capacity the excess queues as well: a backlog that grows
    with the window, its share 1 - capacity / offered at any length (a real overload), until `buffer` frames wait;
    past that they are dropped (inf: never). A window of n requests sends n x `frames_per_request` frames, a
    capacity probe `probe_frames`."""
    capacity_mpps: float
    backlog: float
    steepness: float = 8.0
    buffer: float = math.inf
    frames_per_request: float = 1.0
    probe_frames: float = 3000.0

    def _excess(self, offered: float, frames: float) -> float:
        return frames * max(0.0, 1 - self.capacity_mpps / offered)

    def loss(self, offered: float, frames: float) -> float:
        transient = self.backlog * min(1.0, offered / self.capacity_mpps) ** self.steepness
        return min(1.0, (self._excess(offered, frames) + transient) / frames)

    def dropped(self, offered: float, frames: float) -> float:
        """Frames a run of `frames` frames drops."""
        return max(0.0, self._excess(offered, frames) - self.buffer)

    def load_factor(self, offered: float, frames: float) -> float:
        """The frames served (all but the dropped, the backlog drained after the last send), at its capacity, over
        the time the load was offered."""
        return offered * (1 - self.dropped(offered, frames) / frames) / self.capacity_mpps

    def __call__(self, offered: float) -> Outcome:
        """A capacity probe."""
        loss = self.loss(offered, self.probe_frames)
        return Outcome(loss, offered * (1 - loss), law=DROP if self.dropped(offered, self.probe_frames) else BACKLOG)

    # The highest offered load whose run of `frames` frames loses < max_loss (the loss is monotonic in the load too).
    threshold = WindowedServer.threshold


def zipf_shares(cores: int, alpha: float, keys: int = 1 << 16, seed: int = 0) -> tuple[float, ...]:
    """Each core's share of a Zipf(alpha) load over `keys` keys, each key owned by a core drawn at random (as a
    hash partitions them): the busiest core's share grows with alpha."""
    import numpy as np

    weight = 1 / np.arange(1, keys + 1) ** alpha
    owner = np.random.default_rng(seed).integers(0, cores, keys)
    return tuple(float(v) for v in np.bincount(owner, weights=weight, minlength=cores))


def evaluate_point(make_system, options: dict[str, Any], report) -> dict[str, Any]:
    """Statistics of a made-up server from a point's resolved configuration (a sweep evaluator): throughput grows
    with the ROB and the issue width and falls with the item size. `client.seed` = 13 raises (a point that fails), 14 kills its worker process;
    options['sleep_ms'] (default: System.seed) is how long the point takes, so a test can kill a sweep mid-way."""
    config = make_system().to_dict()
    core, client = config["core"], config["client"]
    if client["seed"] == 13:
        raise RuntimeError("synthetic failure: client.seed = 13")
    if client["seed"] == 14:
        os._exit(3)                      # the worker process dies (as an engine crash would)
    steps = 5
    for i in range(steps):
        time.sleep(options.get("sleep_ms", config["seed"]) / 1000 / steps)
        report(f"step {i + 1} of {steps}")
    rob, width = core["rob_entries"], core["issue_width"]
    ipc = width * (1 - 0.9 ** min(rob, 256)) / (1 + 0.2 * width)
    size = client["value_size"] or {"tiny": 8, "small": 64, "large": 1024, "xlarge": 1152}[client["dataset"]]
    return {"stats": {paths.CLIENT.stat("throughput_mrps"): 10.0 * ipc / (1 + size / 512),
                      paths.CORE.stat(0, 0, "ipc"): ipc, paths.CLIENT_LATENCY.stat("p95"): 1000.0 / ipc,
                      paths.LLC.stat(0, "mpki"): config["caches"]["llc"]["size"] / 2**20}}
