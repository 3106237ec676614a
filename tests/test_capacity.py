"""The capacity search (drivers/capacity.py): convergence to its stated resolution on synthetic servers whose answer
is known in closed form, and on small real runs of an in-order single-issue core and a 4-issue one."""

import math
import pathlib

import pytest

from drivers import capacity
from drivers.synthetic import BacklogServer, QueueServer, SkewedServer, zipf_shares
from models.params import ParamError

LINE = 148.8  # 100 GbE, smallest frames (M frames/s per port)


@pytest.fixture(scope="module")
def kvs_server(engine):
    import subprocess

    from configs import brps_target_socket

    from conftest import WORKLOADS

    proc = subprocess.run(["make", "-s", "-C", str(WORKLOADS), "kvs"], capture_output=True, text=True)
    if proc.returncode != 0 or not brps_target_socket.KVS_SERVER.is_file():
        pytest.fail(f"building the KVS server failed:\n{proc.stdout}\n{proc.stderr}", pytrace=False)
    return brps_target_socket.KVS_SERVER


@pytest.mark.parametrize("cap", [0.05, 1.7, 37.0, 120.0, 146.0])
@pytest.mark.parametrize("resolution", [0.01, 0.002])
def test_converges_within_the_stated_resolution(cap, resolution):
    server = QueueServer(cap)
    res = capacity.search(server, LINE, resolution=resolution)
    truth = server.threshold(0.01)
    assert res.best is not None
    assert res.offered_mpps < truth, "the answer sustained, so it is below the threshold"
    assert truth <= res.offered_mpps * (1 + resolution), "and within the resolution of it"
    assert res.upper_mpps <= res.offered_mpps * (1 + resolution)
    assert res.probes[0].stage == "saturate" and res.probes[0].offered_mpps == LINE
    # The saturating probe's answered rate predicts the threshold of a server that drops what it cannot serve:
    # one probe just below it sustains, the one a resolution above fails, whatever the capacity.
    assert len(res.probes) == 3


SYNTHETIC = [QueueServer(c) for c in (0.05, 0.8, 1.7, 10.0, 37.0, 120.0, 146.0, 1000.0)] + \
    [QueueServer(20.0, background_loss=0.004), QueueServer(20.0, knee=0.3)] + \
    [BacklogServer(c) for c in (0.05, 1.1, 8.0, 30.0, 120.0)]
# Servers whose saturating probe under-states their capacity (overload costs them work), as real short runs' do.
UNDER_STATED = [BacklogServer(c, slowdown) for c in (0.05, 1.1, 8.0, 30.0, 120.0) for slowdown in (0.02, 0.05)]


def test_at_most_four_probes_a_point_on_average():
    """The synthetic cases at 1%: the search of a server whose loss rises smoothly before capacity (the knee)
    needs more, one that is line-limited a single probe."""
    counts = [len(capacity.search(server, LINE).probes) for server in SYNTHETIC]
    assert sum(counts) / len(counts) <= 4, counts


def bisection(evaluate, high, lowest, resolution=0.01, max_loss=0.01):
    """The reference answer: plain geometric bisection between a load that sustains and one that fails."""
    lo, hi = lowest, high
    assert evaluate(lo).loss < max_loss <= evaluate(hi).loss
    while hi > lo * (1 + resolution):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if evaluate(mid).loss < max_loss else (lo, mid)
    return lo, hi


@pytest.mark.parametrize("server", [s for s in SYNTHETIC + UNDER_STATED if not isinstance(s, QueueServer)
                                    or s.capacity_mpps < LINE], ids=repr)
def test_the_answer_agrees_with_bisection_within_the_resolution(server):
    """Every synthetic server's answer and bisection's bracket the same threshold: each answer sustained, each
    upper end failed, so the two answers are within one resolution of each other."""
    res = capacity.search(server, LINE)
    lo, hi = bisection(server, LINE, server.capacity_mpps * 0.5)
    assert res.best.loss < 0.01 <= server(res.upper_mpps).loss
    assert max(lo, res.offered_mpps) <= min(hi, res.upper_mpps), "the two brackets overlap"
    assert abs(math.log(res.offered_mpps / lo)) <= math.log(1.01)


def test_a_short_runs_backlog_is_predicted_by_its_own_law():
    """A short run whose excess waits in the queues (no frame dropped): the loss is (x - C) / (x + C), and its
    answered rate carries one round trip in its span. Predicted under the drop law from the answered rate (the
    search before the laws), the first probe lands about 6% low and the search creeps up 1%, 2%, 4% ... (5 or 6
    probes); under its own law it closes in three."""
    for server in (BacklogServer(c) for c in (0.05, 1.1, 8.0, 30.0, 120.0)):
        res = capacity.search(server, LINE)
        assert res.offered_mpps < server.threshold(0.01) <= res.upper_mpps <= res.offered_mpps * 1.01
        assert len(res.probes) == 3, res.table()


def test_an_under_stated_saturating_probe_costs_at_most_four_more_probes():
    """Overload slows the server by 2-5% (a backlog beyond its caches): the saturating probe under-states its
    capacity, the probe just below the prediction and the one a resolution above it sustain, and the search
    jumps past the prediction (OVERSHOOT) to a failed probe near capacity whose own served rate predicts it
    (the search before crept up 1%, 2%, 4% ...: 5 to 9 probes)."""
    counts = []
    for server in UNDER_STATED:
        res = capacity.search(server, LINE)
        assert res.offered_mpps < server.threshold(0.01) <= res.upper_mpps <= res.offered_mpps * 1.01
        counts.append(len(res.probes))
    assert max(counts) <= 7 and sum(counts) / len(counts) <= 6, counts


# Servers whose keys are skewed (Zipf over keys each owned by one core): the busiest core saturates first.
SKEWED = [SkewedServer(rate, zipf_shares(cores, alpha)) for cores, rate, alpha in
          ((8, 3.0, 0.99), (16, 4.0, 1.2), (60, 1.2, 0.5), (60, 1.2, 0.99), (60, 2.0, 0.9), (120, 0.6, 0.99))]


def test_a_skewed_server_is_found_from_one_saturated_run():
    """The saturating probe's per-core shares of the load (the client's counts) and its served rate give a core's
    rate, and so the load at which the busiest cores lose 1%: three probes, as for an even server, and the answer
    brackets the true threshold within the resolution. Predicted as if the load were even (the search before the
    shares), the first probe lands above the threshold and the search takes 6 to 11."""
    import dataclasses

    for server in SKEWED:
        res = capacity.search(server, LINE)
        truth = server.threshold(0.01)
        assert res.offered_mpps < truth <= res.upper_mpps <= res.offered_mpps * 1.01, res.table()
        assert len(res.probes) == 3, res.table()
        even = capacity.search(lambda rate, s=server: dataclasses.replace(s(rate), shares=()), LINE)
        assert len(even.probes) >= 6 and even.offered_mpps < truth <= even.upper_mpps


# Zipf-like servers whose cores' queues are paced by the hottest one (synthetic.SkewedServer, paced): a deeply
# overloaded run's cores serve in proportion to their shares, as the reduced 8-core Zipf point's saturated probe did
# (session 24); two of them slowed by overload too.
PACED = [SkewedServer(rate, zipf_shares(cores, alpha), slowdown=slowdown, paced=True) for cores, rate, alpha, slowdown
         in ((8, 2.0, 0.99, 0.0), (8, 2.0, 0.99, 0.05), (60, 1.2, 0.99, 0.0), (16, 3.0, 1.2, 0.02))]


def test_a_paced_skewed_server_is_predicted_from_its_cores_rates():
    """The saturated probe's cores' served rates give where the hottest core saturates (capacity.
    per_core_threshold): the prediction is the paced server's threshold (within 0.1%, without slowdown), and the
    refined search closes in three probes; cores of equal rates (the probe's core rates dropped, 98a3949's law)
    predict far below it."""
    import dataclasses

    for server in PACED[::2]:
        truth = server.threshold(0.01)
        res = capacity.search(server, LINE)
        assert res.predicted_mpps == pytest.approx(truth, rel=1e-3) and len(res.probes) == 3, res.table()
        assert res.offered_mpps < truth <= res.upper_mpps <= res.offered_mpps * 1.01
        with pytest.warns(capacity.EqualRatesUnderSkew, match="neither its cores' rates nor statistics"):
            even = capacity.search(lambda rate, s=server: dataclasses.replace(s(rate), core_rates=()), LINE)
        assert even.predicted_mpps < 0.8 * truth and even.predicted_by.startswith(capacity.EQUAL_RATES)


def test_the_per_core_threshold_is_where_the_served_fraction_reaches_the_bound():
    shares, rates = (0.5, 0.3, 0.2), (1.0, 3.0, 3.0)
    x = capacity.per_core_threshold(shares, rates, 0.99)
    # core 0 saturates at 2.0; past it the cores serve 1.0 + 0.5 x: 0.99 x at x = 1 / 0.49
    assert x == pytest.approx(1 / 0.49)
    assert sum(min(x * s, r) for s, r in zip(shares, rates)) == pytest.approx(0.99 * x)
    # every core saturated: the threshold is their total over the fraction
    assert capacity.per_core_threshold((0.5, 0.5), (1.0, 1.0), 0.5) == pytest.approx(4.0)


@pytest.mark.parametrize("guess", [0.5, 0.8, 1.2])
def test_a_search_from_a_guess_that_sustains_saturates_next(guess):
    """From a guess (the multi-socket servers' start, below line rate): one that sustains is followed by a probe at
    line rate, a saturated run that predicts the threshold, so a guess half the capacity costs one probe more than
    a search from line rate (the search before stepped up 4 resolutions a probe: 10 or more from half); one above
    the capacity is searched below as from line rate."""
    for server in SKEWED + [QueueServer(7.0), BacklogServer(30.0)]:
        truth = server.threshold(0.01)
        res = capacity.search(server, LINE, start=truth * guess)
        assert res.offered_mpps < truth <= res.upper_mpps <= res.offered_mpps * 1.01, res.table()
        assert res.probes[0].offered_mpps == pytest.approx(truth * guess)
        assert len(res.probes) == (4 if guess < 1 else 3), res.table()
    with pytest.raises(ParamError, match="start"):
        capacity.search(QueueServer(7.0), LINE, start=0.0)


def test_at_most_four_probes_a_point_on_average_with_skewed_and_under_stated_servers():
    """Every synthetic server at 1%, from line rate: the even and skewed ones in 3 (a line-limited one 1, a soft
    knee 7), those whose saturating probe under-states their rate in 3 to 7."""
    counts = [len(capacity.search(server, LINE).probes) for server in SYNTHETIC + SKEWED + UNDER_STATED]
    assert sum(counts) / len(counts) <= 4, counts


def test_a_probes_core_shares_are_the_configurations_expected_ones():
    """Skewed keys: each core's expected share of the load (partition_load's, from the items, cores, steering and
    GET ratio); uniform keys: none (even)."""
    from configs import brps_target_socket
    from drivers.studies import partition_load

    zipf = brps_target_socket.system(cores=4, items=4096, popularity="zipf")
    expected = partition_load.expected_core_share(4096, 4, "erew", 0.95, zipf.client.zipf_theta)
    assert capacity.load_shares(zipf) == pytest.approx(tuple(expected)) and max(expected) > 0.3
    assert capacity.load_shares(brps_target_socket.system(cores=4, items=4096)) == ()


def test_the_threshold_under_skew_is_where_the_busiest_cores_lose_enough():
    # Three cores at 60/20/20 of 10 offered served 8: the busy core serves 4 (the others their 2 each), so the loss
    # is 1% where it is offered 4 + 1% of the whole: x = 4 / (0.99 - 0.4)
    probe = capacity.Probe(10.0, 0.2, 8.0, "saturate", law=capacity.DROP, shares=(0.6, 0.2, 0.2))
    assert capacity.threshold_of(probe, 0.01) == pytest.approx(4 / 0.59, rel=1e-12)
    even = capacity.Probe(10.0, 0.2, 8.0, "saturate", law=capacity.DROP, shares=(0.5, 0.5))
    assert capacity.threshold_of(even, 0.01) == pytest.approx(8 / 0.99, rel=1e-12), "even shares: the plain law"


def test_a_probes_loss_law_is_read_from_its_statistics():
    """No frame lost and the excess queued: BACKLOG. Frames lost at the NIC: DROP. No frame lost but a shortfall
    that no backlog explains (the implied service rate below the plain answered one: a client held back by its
    window): DROP."""
    base = {"client.offered_mpps": 10.0, "client.packets": 1000, "client.requests": 1000,
            "client.lost_requests": 0, "client.loss": 0.0, "client.measured_ns": 100_000.0}
    queued = capacity.outcome_from_stats({**base, "client.throughput_mrps": 5.0, "client.latency.mean": 40_000.0},
                                         10.0)
    assert queued.law == capacity.BACKLOG and queued.loss == pytest.approx(1 / 6)
    dropped = capacity.outcome_from_stats({**base, "client.throughput_mrps": 6.0, "client.loss": 0.3,
                                           "client.latency.mean": 40_000.0}, 10.0)
    assert dropped.law == capacity.DROP
    held = capacity.outcome_from_stats({**base, "client.throughput_mrps": 8.0, "client.latency.mean": 4_000.0},
                                       10.0)
    assert held.law == capacity.DROP and held.loss > 0.1


def test_slow_server_is_not_quantised_to_zero():
    """An in-order core answers a few percent of the line rate: bisecting down from line rate in 6 steps would
    give 0 or line/64; starting from the answered rate finds it."""
    server = QueueServer(0.8)
    res = capacity.search(server, LINE)
    assert res.offered_mpps == pytest.approx(server.threshold(0.01), rel=0.01)


def test_background_loss_and_a_soft_knee():
    server = QueueServer(20.0, background_loss=0.004)
    res = capacity.search(server, LINE, resolution=0.005)
    assert server.threshold(0.01) / 1.005 <= res.offered_mpps < server.threshold(0.01)
    knee = QueueServer(20.0, knee=0.3)
    res = capacity.search(knee, LINE)
    # Every sustained probe is below every failed one, and the final bracket is 1% wide.
    ok = [p.offered_mpps for p in res.probes if p.sustained(0.01)]
    bad = [p.offered_mpps for p in res.probes if not p.sustained(0.01)]
    assert max(ok) < min(bad) <= max(ok) * 1.01
    assert knee(res.offered_mpps).loss < 0.01 <= knee(min(bad)).loss


def test_a_server_that_keeps_up_with_line_rate_is_line_limited():
    res = capacity.search(QueueServer(1000.0), LINE)
    assert res.line_limited and res.offered_mpps == LINE and len(res.probes) == 1


def test_probes_are_reported_in_order():
    seen = []
    res = capacity.search(QueueServer(10.0), LINE, progress=seen.append)
    assert seen == res.probes
    rows = res.table()
    assert [r["probe"] for r in rows] == list(range(len(rows)))
    assert {r["stage"] for r in rows} >= {"saturate", "bracket", "refine"} or len(rows) <= 3
    assert all(r["sustained"] == (r["loss"] < 0.01) for r in rows)


def test_bad_search_settings_are_refused():
    for kwargs in ({"resolution": 0}, {"resolution": 1.5}, {"max_loss": 0}):
        with pytest.raises(ParamError):
            capacity.search(QueueServer(1.0), LINE, **kwargs)


def test_a_server_that_never_sustains_gives_no_answer():
    res = capacity.search(lambda rate: capacity.Outcome(1.0, 0.0), LINE)
    assert res.best is None and res.offered_mpps == 0.0


def test_outcome_from_stats_counts_requests_per_frame():
    """With 4 requests per frame, 20 M requests/s answered of 10 M frames/s offered (2 ports) is a 50% shortfall."""
    stats = {"client.offered_mpps": 10.0, "client.packets": 1000, "client.requests": 4000,
             "client.lost_requests": 0, "client.throughput_mrps": 20.0, "client.loss": 0.0}
    out = capacity.outcome_from_stats(stats, 5.0)
    assert out.loss == pytest.approx(0.5) and out.answered_mpps == pytest.approx(2.5)
    assert math.isclose(capacity.outcome_from_stats({**stats, "client.loss": 0.7}, 5.0).loss, 0.7)


def _one_core(rob, width):
    from configs import brps_target_socket

    def make(rate):
        s = brps_target_socket.system(cores=1, requests=600, items=4096, offered_mpps=rate)
        s.caches.llc.size = 768 * 1024
        # one core cannot form the target's clusters of 2: a cluster of one on a one-router mesh
        s.cores_per_cluster = 1
        s.noc = brps_target_socket.share_noc()
        s.core.rob_entries, s.core.issue_width = rob, width
        s.core.fetch_width = s.core.commit_width = width
        return s
    return make


@pytest.mark.slow
@pytest.mark.parametrize("rob,width", [(1, 1), (64, 4)])
def test_real_capacity_of_an_in_order_and_a_4_issue_core(kvs_server, rob, width):
    make = _one_core(rob, width)
    res = capacity.capacity(make, resolution=0.05)
    assert res.best is not None and not res.line_limited, "one core cannot take 100 GbE of tiny requests"
    assert res.best.loss < 0.01 and res.upper_mpps <= res.offered_mpps * 1.05
    assert any(not p.sustained(0.01) and p.offered_mpps == res.upper_mpps for p in res.probes)


def _xeon_one_core(rate):
    from configs import xeon_e5_2697v2_socket as xeon
    return xeon.system(cores=1, ports=1, items=1 << 16, requests=3000, offered_mpps=rate)


@pytest.mark.slow
@pytest.mark.parametrize("make", [_one_core(1, 1), _xeon_one_core], ids=["target-in-order", "xeon"])
def test_real_one_core_servers_at_one_percent_agree_with_bisection(kvs_server, make):
    """The 1-core in-order target (a short run: no frame dropped, its loss under BACKLOG's law) and the 1-core
    Xeon (frames dropped at line rate: DROP's law, which over-states it by 15%) at the default 1%: at most 4 probes
    (6 and 8 before the laws), and bisection on the same simulated server brackets the same threshold."""
    res = capacity.capacity(make)
    assert len(res.probes) <= 4, res.table()
    evaluate = capacity.simulated_server(make)
    lo, hi = bisection(evaluate, res.probes[0].offered_mpps, res.probes[0].answered_mpps / 2)
    assert max(lo, res.offered_mpps) <= min(hi, res.upper_mpps), (lo, hi, res.table())


def fake_simulation(server, seen):
    """simulate_fn for `capacity.capacity`: the statistics of `server` at the probe's load; records each probe's
    checkpoint settings and writes a stand-in for the checkpoint a probe is asked to write."""
    def simulate(system):
        seen.append((system.checkpoint_to, system.restore_from))
        if system.checkpoint_to:
            pathlib.Path(system.checkpoint_to).mkdir(parents=True)
        rate = system.client.offered_mpps
        return {"client.offered_mpps": rate, "client.packets": 1.0, "client.requests": 1.0,
                "client.throughput_mrps": server(rate).answered_mpps, "client.loss": 0.0}
    return simulate


def test_probes_restore_the_first_probes_checkpoint(tmp_path):
    """restore=None with a data set larger than the warm-up: the saturating probe loads the store and checkpoints it
    at the end of the load; every later probe restores it. A small one is loaded by every probe, as is every data
    set by default (restore=False)."""
    from configs import brps_target_socket

    def make(items, warmup):
        def system(rate):
            return brps_target_socket.system(cores=2, items=items, offered_mpps=rate, warmup_requests=warmup)
        return system

    seen = []
    capacity.capacity(make(1 << 20, 20_000), simulate_fn=fake_simulation(QueueServer(3.0), seen))
    assert all(s == ("", "") for s in seen), "by default every probe loads the data set"
    seen = []
    res = capacity.capacity(make(1 << 20, 20_000), simulate_fn=fake_simulation(QueueServer(3.0), seen),
                            checkpoint=tmp_path, restore=None)
    target = str(tmp_path / "data-set")
    assert seen[0] == (target, "") and all(s == ("", target) for s in seen[1:]) and len(seen) == len(res.probes)
    assert (tmp_path / "data-set").is_dir(), "a checkpoint folder given is kept"
    with pytest.raises(ParamError, match="already holds"):
        capacity.capacity(make(1 << 20, 20_000), simulate_fn=fake_simulation(QueueServer(3.0), []),
                          checkpoint=tmp_path, restore=None)
    seen = []
    capacity.capacity(make(4096, 20_000), simulate_fn=fake_simulation(QueueServer(3.0), seen), restore=None)
    assert all(s == ("", "") for s in seen)
    seen = []
    capacity.capacity(make(4096, 20_000), simulate_fn=fake_simulation(QueueServer(3.0), seen), restore=True)
    folder = pathlib.Path(seen[0][0]).parent
    assert seen[1][1] == seen[0][0] and not folder.exists(), "a temporary checkpoint is removed after the search"


# ---- a search that stops at its saturated probe (refine=False, session 22, issue 24 item 4) -----------------------

def _counting(server):
    calls = []

    def evaluate(rate):
        calls.append(rate)
        return server(rate)
    return evaluate, calls


@pytest.mark.parametrize("server", [s for s in SYNTHETIC + SKEWED + UNDER_STATED
                                    if not (isinstance(s, QueueServer) and s.capacity_mpps >= LINE)],
                         ids=lambda s: repr(s)[:60])
def test_a_search_stopped_at_its_saturated_probe_starts_half_a_resolution_above_its_prediction(server):
    """One probe, at line rate: its prediction (the threshold under its loss law and the cores' shares) is the one
    the refined search takes its second probe from; the windows start half a resolution above it (session 24; the
    refined search's next probe is half a resolution below), no higher than a resolution below the saturated
    probe; no bracket is claimed (`best` is None, the upper end is the saturated probe's load)."""
    full = capacity.search(server, LINE)
    evaluate, calls = _counting(server)
    res = capacity.search(evaluate, LINE, refine=False)
    assert calls == [LINE] and len(res.probes) == 1 and res.probes[0].stage == "saturate"
    assert not res.refined and res.best is None and res.upper_mpps == LINE and res.offered_mpps == 0.0
    assert res.predicted_mpps == full.predicted_mpps
    assert full.probes[1].offered_mpps == pytest.approx(res.predicted_mpps / 1.005)
    assert res.start_mpps == pytest.approx(min(res.predicted_mpps * 1.005, LINE / 1.01))
    if _follows_its_law(server) and res.start_mpps < LINE / 1.01:
        # then the start fails within the resolution above the threshold, and a resolution below it sustains
        truth = server.threshold(0.01)
        assert res.start_mpps / 1.01 < truth <= res.start_mpps


def _follows_its_law(server) -> bool:
    """Does a deeply overloaded probe of `server` serve what it serves near capacity (no knee, no slowdown)?"""
    return isinstance(server, SkewedServer) and not server.slowdown or \
        isinstance(server, QueueServer) and not server.knee or isinstance(server, BacklogServer) and not server.slowdown


def test_a_stopped_search_that_is_line_limited_or_starts_from_a_sustained_guess():
    evaluate, calls = _counting(QueueServer(1000.0))
    res = capacity.search(evaluate, LINE, refine=False)
    assert res.line_limited and res.offered_mpps == LINE and calls == [LINE] and res.refined
    # A guess that sustains: the saturated probe follows, and the windows start no lower than the guess.
    server = QueueServer(7.0)
    res = capacity.search(server, LINE, start=3.0, refine=False)
    assert [p.offered_mpps for p in res.probes] == [3.0, LINE] and res.best.offered_mpps == 3.0
    assert res.start_mpps == pytest.approx(capacity.search(server, LINE).probes[1].offered_mpps * 1.005 ** 2)
    res = capacity.search(QueueServer(2.9), LINE, start=3.0, refine=False)        # a guess above: it is the top
    truth = QueueServer(2.9).threshold(0.01)
    assert len(res.probes) == 1 and res.upper_mpps == 3.0 and res.start_mpps / 1.01 < truth <= res.start_mpps


def test_a_saturated_probe_that_served_nothing_falls_back_to_the_refined_search():
    """No prediction from a run that answered nothing (a server that stops answering when flooded): the search
    refines as before rather than start the windows at zero, and says so (`refined`)."""
    server = QueueServer(10.0)

    def flooded(rate):
        return capacity.Outcome(1.0, 0.0) if rate > 100 else server(rate)
    res = capacity.search(flooded, LINE, refine=False)
    assert res.refined and len(res.probes) > 1
    assert res.offered_mpps < server.threshold(0.01) <= res.upper_mpps <= res.offered_mpps * 1.01
    assert res.start_mpps == res.offered_mpps


@pytest.mark.parametrize("kwargs", [{"resolution": 0}, {"resolution": -0.01}, {"resolution": 1.0},
                                    {"resolution": math.nan}, {"max_loss": 0}, {"max_loss": 1.0},
                                    {"start": 0.0}, {"start": -1.0}, {"start": math.nan}])
def test_bad_settings_of_a_stopped_search_are_refused_before_any_probe(kwargs):
    evaluate, calls = _counting(QueueServer(1.0))
    with pytest.raises(ParamError):
        capacity.search(evaluate, LINE, refine=False, **kwargs)
    assert calls == []
    with pytest.raises(ParamError):
        capacity.search(evaluate, 0.0, refine=False)
    assert calls == []


@pytest.mark.parametrize("options", [{"capacity_search": "bisect", "steady": True},
                                     {"capacity_search": "saturated"},
                                     {"capacity_search": "saturated", "steady": True, "confirm": False}])
def test_a_sweeps_capacity_search_option_is_checked_before_any_probe(options):
    """options['capacity_search']: 'refined' or 'saturated' (the default where windows judge the load), which needs them;
    anything else, or 'saturated' without the windows, is a ParamError before the point makes a system."""
    from drivers.sweep import evaluators

    def make_system():
        pytest.fail("a system was made: the option was not checked first")
    with pytest.raises(ParamError, match="capacity_search"):
        evaluators.evaluate_capacity(make_system, options, lambda text: None)
    assert capacity.refine_option({}) and capacity.refine_option({"capacity_search": "refined"})
    assert not capacity.refine_option({"capacity_search": "saturated", "steady": True})
    # The default (session 24): the saturated search where windows judge the load, the refined one elsewhere.
    assert not capacity.refine_option({"steady": True})
    assert capacity.refine_option({"steady": True, "confirm": False})
    assert capacity.refine_option({"steady": True, "capacity_search": "refined"})


def _studys_point(monkeypatch, options):
    """The end-to-end (and scaling) study's evaluator on a 2-core target point whose probes are a synthetic server
    (QueueServer(7.0)) and whose windows are stubbed: the search the windows were given, and the point's stats."""
    from configs import brps_target_socket
    from drivers import window_capacity
    from drivers.studies import end_to_end

    server, given = QueueServer(7.0), []
    monkeypatch.setattr(capacity, "simulated_server", lambda make, runner=None: server)

    def at_capacity(make, res, seeds, options, report, runner=None, journal=None):
        given.append(res)
        return {"stats": {"capacity.mpps_per_port": 6.9, "capacity.upper_mpps_per_port": 6.95,
                          "client.offered_mpps": 13.8, "client.loss": 0.0}, "run_stats": {}, "windows": []}
    monkeypatch.setattr(window_capacity, "at_capacity", at_capacity)
    out = end_to_end.evaluate(lambda: brps_target_socket.system(cores=2, items=4096),
                              {"power": False, "shared_warmup": False, **options}, lambda text: None)
    return given, out["stats"]


def test_the_studies_capacity_points_stop_at_the_saturated_probe_by_default(monkeypatch):
    """The end-to-end and scaling studies' evaluator: with windows to judge the load, the probes stop at the
    saturated one by default and the windows start from its prediction (on 98a3949 the search refined to the
    resolution first: 3 probes here); options['capacity_search'] = 'refined' keeps that search; without windows
    the probes are the answer, refined; a bad value is refused before any run."""
    given, st = _studys_point(monkeypatch, {"steady": True})
    assert len(given) == 1 and not given[0].refined and len(given[0].probes) == 1 and st["capacity.probes"] == 1.0
    assert given[0].start_mpps / 1.01 < QueueServer(7.0).threshold(0.01) <= given[0].start_mpps
    assert st["capacity.mpps_per_port"] == 6.9 and "e2e.sustained_mrps" in st
    given, st = _studys_point(monkeypatch, {"steady": True, "capacity_search": "refined"})
    assert given[0].refined and len(given[0].probes) == 3 and st["capacity.probes"] == 3.0
    given, st = _studys_point(monkeypatch, {})
    assert given == [] and st["capacity.probes"] == 3.0
    with pytest.raises(ParamError, match="capacity_search"):
        _studys_point(monkeypatch, {"steady": True, "capacity_search": "bisect"})
    with pytest.raises(ParamError, match="capacity_search"):
        _studys_point(monkeypatch, {"capacity_search": "saturated"})
