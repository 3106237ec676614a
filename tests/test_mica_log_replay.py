"""The replay of one partition of MICA's log (drivers/cli/mica_log_replay.py) against what follows from its rule."""

from __future__ import annotations

import pytest

from drivers.cli.mica_log_replay import replay


def test_a_log_over_twice_the_data_never_re_appends_or_evicts():
    """With in-place PUTs the tail never moves unless a read re-appends, and no item is half a log behind."""
    assert all(moved == missed == 0 for _, moved, missed in replay(2.2, 2000, marks=(1, 5)))


def test_at_micas_24_partition_ratio_a_fifth_of_the_gets_re_append_at_first_and_nothing_misses_early():
    """1.6 x the data: the oldest 1 - 1.6 / 2 = 20% of the items lie in the older half after the load, so at first
    95% x 20% = 0.19 of the requests re-append; each re-append moves one more item into the older half, so the rate
    holds until the tail has moved (1.6 - 1) n past the oldest item (3.2 n requests), before which nothing misses."""
    spans = replay(1.6, 100_000, marks=(0.025, 1, 2))
    assert spans[0][1] == pytest.approx(0.19, abs=0.02)
    assert all(missed == 0 for _, _, missed in spans)
    assert all(moved == pytest.approx(0.19, abs=0.02) for _, moved, _ in spans)


def test_a_log_no_larger_than_the_data_is_refused():
    with pytest.raises(SystemExit, match="the log must be larger than the data"):
        replay(1.0, 100)
