"""Which law predicts a skewed point's bracket (drivers/capacity.py `threshold_law`): a deeply overloaded probe under
skewed keys is read by each core's own served rate; a simulated probe whose statistics lack the counters that gives
is an error naming them (session 24's fourth read: it fell back to the equal-rates law unsaid), and where no rates
exist (a server without statistics, more queues than cores, a core that served nothing) the equal-rates law
predicts with a warning and the search records which law predicted."""

import pytest

from drivers import capacity
from drivers.synthetic import QueueServer, SkewedServer, zipf_shares
from models import stats_paths as paths

LINE = 148.8
SHARES = (0.5, 0.3, 0.2)


def _stats(tx_frames=(5000.0, 3000.0, 2000.0), span_ns=1e6, offered_all=30.0, drop=()):
    """A simulated deeply overloaded probe's statistics: each core's NIC queue's TX frames over a 1 ms span, the
    client's offered load over all ports (3 ports at 10 M frames/s each); `drop` names counters left out."""
    stats = {paths.NIC_QUEUE.stat(0, q, "tx_frames"): float(f) for q, f in enumerate(tx_frames)}
    stats.update({"client.measured_ns": span_ns, "client.offered_mpps": offered_all})
    return {k: v for k, v in stats.items() if not any(d in k for d in drop)}


def _probe(stats, shares=SHARES, core_rates=()):
    # 10 M frames/s a port offered, 80% lost: deeply overloaded (DROP), where the cores' own rates are wanted
    return capacity.Probe(10.0, 0.8, 2.0, "saturate", stats, law=capacity.DROP, shares=shares, core_rates=core_rates)


def test_a_simulated_probe_is_read_by_its_cores_rates():
    """Each queue's TX frames over the span, over the 3 ports: 5000 frames in 1 ms is 5 M frames/s, 1.667 a port;
    the rates over the shares, 3.333 each: the cores saturate together at 3.333 M frames/s a port, and the 1% bound is
    there over 0.99 (every core past its rate: the served fraction is 3.333 / x)."""
    rates = capacity.core_rates(_stats(), 10.0)
    assert rates == pytest.approx((5 / 3, 1.0, 2 / 3), rel=1e-12)
    t = capacity.threshold_law(_probe(_stats()), 0.01)
    assert t.law == capacity.PER_CORE_RATES and t.why == ""
    assert t.mpps == pytest.approx((10 / 3) / 0.99, rel=1e-12)


@pytest.mark.parametrize("drop, named", [
    ("tx_frames", "system.nic*.queue*.tx_frames"),
    ("client.measured_ns", "client.measured_ns"),
    ("client.offered_mpps", "client.offered_mpps"),
])
def test_a_simulated_probe_without_its_counters_is_an_error_naming_them(drop, named):
    """The statistics of a simulated probe without the queues' TX frames, the span or the offered load: an error
    naming the missing counter, before any prediction (on 5409fa2 the equal-rates law predicted, unsaid)."""
    probe = _probe(_stats(drop=(drop,)))
    with pytest.raises(capacity.MissingCounters) as err:
        capacity.threshold_of(probe, 0.01)
    assert err.value.missing == [named] and named in str(err.value) and "never taken as zero" in str(err.value)
    with pytest.raises(KeyError):           # a KeyError and a ValueError, as power.activity.MissingCounters
        capacity.core_rates(probe.stats, 10.0)
    with pytest.raises(capacity.MissingCounters):
        capacity.search(lambda rate: capacity.Outcome(0.8, 2.0, probe.stats, law=capacity.DROP, shares=SHARES),
                        LINE, refine=False)


@pytest.mark.parametrize("stats, core_rates, why", [
    ({}, (), "neither its cores' rates nor statistics"),
    (_stats(tx_frames=(5000.0, 3000.0, 2000.0, 0.0)), (), "4 NIC queues for 3 cores"),
    (_stats(tx_frames=(5000.0, 0.0, 2000.0)), (), "core(s) [1] served nothing"),
    (_stats(span_ns=0.0), (), "no span"),
])
def test_where_no_core_has_a_rate_the_equal_rates_law_predicts_and_says_why(stats, core_rates, why):
    """A server without statistics or rates, a NIC with more queues than the server has cores, a core that served
    nothing, a run that measured no span: the equal-rates law (the probe's served rate over the shares), a warning
    naming why, and the result names the law."""
    probe = _probe(stats, core_rates=core_rates)
    with pytest.warns(capacity.EqualRatesUnderSkew, match="cores of equal rates") as seen:
        t = capacity.threshold_law(probe, 0.01)
    assert why in str(seen[0].message) and why in t.why and t.law == capacity.EQUAL_RATES
    # the equal-rates law: served 2 of 10 at shares 0.5/0.3/0.2 caps every core at u = 0.2 / 3 of the offered load
    # (3 u = 0.2); 0.99 of it is served with the cap at 0.49 (0.2 + 0.3 in full, the hot core capped: 0.5 + u), and
    # x = 10 u_probe / u_bound
    assert t.mpps == pytest.approx(10 * (0.2 / 3) / 0.49, rel=1e-12)
    with pytest.warns(capacity.EqualRatesUnderSkew):
        assert capacity.threshold_of(probe, 0.01) == t.mpps
    assert capacity.threshold_law(probe, 0.01, quiet=True).describe() == f"equal rates ({t.why})"


def test_a_search_records_which_law_predicted_its_bracket():
    """SearchResult.predicted_by and each failed probe's row: the per-core rates for a paced Zipf-like server that
    reports them, the equal-rates law (with why, and a warning) for the same server read blind, the plain law for
    even shares."""
    import dataclasses

    paced = SkewedServer(2.0, zipf_shares(8, 0.99), paced=True)
    res = capacity.search(paced, LINE, refine=False)
    assert res.predicted_by == capacity.PER_CORE_RATES
    assert res.table()[0]["predicted_by"] == capacity.PER_CORE_RATES and not res.table()[0]["sustained"]
    with pytest.warns(capacity.EqualRatesUnderSkew):
        blind = capacity.search(lambda rate: dataclasses.replace(paced(rate), core_rates=()), LINE, refine=False)
    assert blind.predicted_by.startswith(capacity.EQUAL_RATES + " (") and "neither" in blind.predicted_by
    assert blind.predicted_mpps < 0.8 * res.predicted_mpps
    even = capacity.search(QueueServer(7.0), LINE)
    assert even.predicted_by == capacity.PLAIN_LAW
    rows = even.table()
    assert all(r["predicted_by"] == ("" if r["sustained"] else capacity.PLAIN_LAW) for r in rows)


def test_near_capacity_and_backlogged_probes_use_the_equal_rates_law_without_a_warning(recwarn):
    """A probe losing under half its load (DROP) or a short run's backlog (BACKLOG) is read by its served fraction
    under skew, as designed (the cores' own rates are for deeply overloaded probes): recorded, not warned."""
    near = capacity.Probe(10.0, 0.2, 8.0, "saturate", law=capacity.DROP, shares=(0.6, 0.2, 0.2))
    backlog = capacity.Probe(10.0, 0.2, 8.0, "saturate", law=capacity.BACKLOG, shares=(0.6, 0.2, 0.2))
    for probe in (near, backlog):
        t = capacity.threshold_law(probe, 0.01)
        assert t.law == capacity.EQUAL_RATES and t.why == ""
    assert capacity.threshold_law(near, 0.01).mpps == pytest.approx(4 / 0.59, rel=1e-12)
    assert not [w for w in recwarn if issubclass(w.category, capacity.EqualRatesUnderSkew)]
