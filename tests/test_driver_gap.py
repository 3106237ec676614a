"""The driver-gap experiment (drivers/cli/driver_gap.py): each variant is one of the LLC study's two drivers with
exactly one of its three differences (TX ring, TX freeing, buffer layout) taken from the other, and every variant is
a configuration the server accepts."""

import math

import pytest

from drivers.cli import driver_gap as gap
from drivers.studies import llc

# The three things the drivers differ in, by the server arguments that set them.
ASPECTS = {"ring": ("tx_ring",), "freeing": ("tx_free",), "buffers": ("buf_headroom", "buf_meta")}


def _freeing(args: dict[str, str]) -> str:
    """tx_free = the ring frees at every burst, whatever the ring's size; else a threshold of free descriptors."""
    return "every burst" if args["tx_free"] == args["tx_ring"] else f"below {args['tx_free']} free"


def _differences(args: dict[str, str], base: dict[str, str]) -> set[str]:
    out = {a for a in ("ring", "buffers") if any(args[n] != base[n] for n in ASPECTS[a])}
    return out | ({"freeing"} if _freeing(args) != _freeing(base) else set())


def test_the_two_drivers_are_the_llc_studys():
    assert gap.VARIANTS["compact"][0] == dict(a.split("=") for a in llc.DRIVERS["compact"][0])
    assert _differences(gap.DPDK, gap.COMPACT) == set(ASPECTS)       # they differ in all three


@pytest.mark.parametrize("name", [n for n in gap.VARIANTS if "+" in n])
def test_each_variant_changes_one_aspect_of_its_driver(name):
    base = gap.DPDK if name.startswith("dpdk+") else gap.COMPACT
    other = gap.COMPACT if base is gap.DPDK else gap.DPDK
    args = gap.VARIANTS[name][0]
    (aspect,) = _differences(args, base)
    # ... and takes the other driver's behaviour for it. A ring of the other's size keeps "free at every burst"
    # (tx_free = the ring) where the base frees at every burst.
    if aspect == "buffers":
        assert all(args[n] == other[n] for n in ASPECTS["buffers"])
    elif aspect == "ring":
        assert args["tx_ring"] == other["tx_ring"]
    else:
        assert _freeing(args) == _freeing(other)


def test_both_directions_of_every_aspect_are_run():
    seen = {(n.split("+")[0], aspect) for n in gap.VARIANTS if "+" in n
            for aspect in _differences(gap.VARIANTS[n][0], gap.DPDK if n.startswith("dpdk+") else gap.COMPACT)}
    assert seen == {(d, a) for d in ("dpdk", "compact") for a in ASPECTS}


@pytest.mark.parametrize("name", list(gap.VARIANTS))
def test_every_variant_is_a_configuration_the_server_takes(name):
    system = gap.variant_sweep(name, cores=4).base.build()
    system.validate()
    argv = dict(a.split("=", 1) for a in system.workload.argv if "=" in a)
    assert {k: argv[k] for k in gap.VARIANTS[name][0]} == gap.VARIANTS[name][0]


def test_the_ratio_carries_both_intervals():
    q, h = gap.ratio(2.0, 0.2, 1.0, 0.1)
    assert q == 2.0 and h == pytest.approx(2.0 * math.hypot(0.1, 0.1))


def test_the_llc_report_gives_the_driver_ratio_only_where_both_drivers_ran():
    import pandas as pd

    dpdk = pd.DataFrame({"llc_per_core_kb": [512, 768, 2048], "throughput_mrps": [200.0, 220.0, 230.0],
                         "throughput_ci_mrps": [4.0, 2.2, 2.3]})
    compact = pd.DataFrame({"llc_per_core_kb": [768, 1024], "throughput_mrps": [200.0, 201.0],
                            "throughput_ci_mrps": [2.0, 2.0]})
    r = llc.driver_ratios({"dpdk": dpdk, "compact": compact})
    assert list(r.llc_per_core_kb) == [768]
    assert r.dpdk_over_compact.iloc[0] == pytest.approx(1.1)
    assert r.half_width_95.iloc[0] == pytest.approx(1.1 * math.hypot(0.01, 0.01))
    assert not len(llc.driver_ratios({"dpdk": dpdk}))           # one driver measured: no ratio
