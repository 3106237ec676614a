"""The replay of one partition of MICA's log (drivers/cli/mica_log_replay.py) against what follows from its rule."""

from __future__ import annotations

import math

import pytest

from drivers.cli.mica_log_replay import replay


def test_a_log_over_twice_the_data_never_re_appends_or_evicts():
    """With in-place PUTs the tail never moves unless a read re-appends, and no item is half a log behind."""
    assert all(moved == missed == 0 for _, moved, missed, _ in replay(2.2, 2000, marks=(1, 5)))


def test_at_micas_24_partition_ratio_a_fifth_of_the_gets_re_append_at_first_and_nothing_misses_early():
    """1.6 x the data: the oldest 1 - 1.6 / 2 = 20% of the items lie in the older half after the load, so at first
    95% x 20% = 0.19 of the requests re-append; each re-append moves one more item into the older half, so the rate
    holds until the tail has moved (1.6 - 1) n past the oldest item (3.2 n requests), before which nothing misses."""
    spans = replay(1.6, 100_000, marks=(0.025, 1, 2))
    assert spans[0][1] == pytest.approx(0.19, abs=0.02)
    assert all(missed == 0 for _, _, missed, _ in spans)
    assert all(moved == pytest.approx(0.19, abs=0.02) for _, moved, _, _ in spans)


def test_a_log_no_larger_than_the_data_is_refused():
    with pytest.raises(SystemExit, match="the log must be larger than the data"):
        replay(1.0, 100)


def poisson_overflow(mean: float, slots: int) -> float:
    """The share of keys a bucket of `slots` entries cannot hold when keys fall into buckets as Poisson(mean)."""
    p, over = math.exp(-mean), 0.0
    for k in range(1, 200):
        p *= mean / k
        over += max(k - slots, 0) * p
    return over / mean


def test_micas_lossy_index_drops_the_keys_a_full_bucket_cannot_hold_and_their_gets_miss():
    """12 items a bucket of 15 entries (MICA's sizing at 4 partitions): the load drops the share of keys a
    Poisson(12) bucket holds beyond 15, 3.35%, and their GETs miss (the model's 192 Mi 4-core run: 3.4%)."""
    spans = replay(2.2, 120_000, marks=(0.5,), items_per_bucket=12)
    dropped = poisson_overflow(12, 15)
    assert dropped == pytest.approx(0.0335, abs=0.0001)
    assert spans[0][2] / 0.95 == pytest.approx(dropped, rel=0.1)
    assert spans[0][1] == 0, "a fresh log over twice the data: no item is half a log behind"
    # A dropped key's PUT appends (5% of the requests are PUTs, a dropped share of them of dropped keys).
    assert spans[0][3] == pytest.approx(0.05 * dropped, rel=0.25)
    # Without the index nothing is dropped: no misses and no appends.
    assert replay(2.2, 120_000, marks=(0.5,))[0][1:] == (0.0, 0.0, 0.0)


def test_behind_a_lossy_index_the_log_ages_and_reads_re_append_only_after_the_tail_moved_past_the_gap():
    """The dropped keys' PUTs move the tail; no GET re-appends before the tail has moved (ratio / 2 - 1) n past the
    load (the oldest item's distance), and once it has, items cross into the older half and GETs re-append them."""
    ratio, n = 2.2, 3000
    spans = replay(ratio, n, marks=(10, 40, 400), items_per_bucket=12)
    appended, prev = 0.0, 0.0
    for mark, moved, _, appends in spans:
        if appended + appends * (mark - prev) * n <= (ratio / 2 - 1) * n:
            assert moved == 0, f"a re-append before the tail moved past the gap (span to {mark} n)"
        appended += appends * (mark - prev) * n
        prev = mark
    assert appended > (ratio / 2 - 1) * n, "the test's last span must run past the gap"
    assert spans[-1][1] > 0, "an aged log re-appends"


def test_a_bad_index_is_refused():
    with pytest.raises(SystemExit, match="an index needs"):
        replay(2.2, 100, items_per_bucket=0)
    with pytest.raises(SystemExit, match="an index needs"):
        replay(2.2, 100, items_per_bucket=12, bucket_slots=0)
