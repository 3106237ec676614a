"""Ivy Bridge's adaptive L3 replacement (DIP, set dueling) is the Xeon's LLC policy and no other platform's: the
Sandy Bridge-EP seeds (pseudo-LRU L3, modelled as LRU) and the target keep theirs; the choice is a parameter."""

from __future__ import annotations

import pytest

from configs import (
    brps_target_socket,
    kvcache_e5_4640_quad,
    mica_e5_2680_dual,
    xeon_e5_2697v2_dual,
    xeon_e5_2697v2_socket,
)
from models.cache import Cache
from models.params import ParamError


def _llcs(system) -> list[str]:
    """Every LLC replacement choice a system's sockets carry."""
    d = system.to_dict()
    socks = d.get("sockets") or [d]
    return [s["caches"]["llc"]["replacement"] for s in socks]


def test_the_xeons_l3_duels_insertion_policies_and_its_private_caches_do_not():
    h = xeon_e5_2697v2_socket.caches(4)
    assert h.llc.replacement == "dip"
    assert (h.l1i.replacement, h.l1d.replacement, h.l2.replacement) == ("lru", "lru", "lru")
    assert _llcs(xeon_e5_2697v2_socket.system(cores=4)) == ["dip"]
    assert set(_llcs(xeon_e5_2697v2_dual.system(cores_per_socket=2))) == {"dip"}


def test_the_sandy_bridge_seeds_and_the_target_keep_lru():
    assert mica_e5_2680_dual.caches().llc.replacement == "lru"
    assert kvcache_e5_4640_quad.sandy.caches().llc.replacement == "lru"
    assert brps_target_socket.caches().llc.replacement == "lru"


def test_dip_is_a_choice_and_an_unknown_policy_is_a_param_error():
    Cache(replacement="dip", assoc=20, size="30MiB").validate()
    with pytest.raises(ParamError, match=r"Cache\.replacement = 'drrip'.*'dip'"):
        Cache(replacement="drrip").validate()
