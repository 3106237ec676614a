"""The front end's decode paths as parameters (models/core.py, models/timing/src/core/frontend.rs): Sandy/Ivy
Bridge's figures on the Xeon, off on the target, and bad input refused before a run."""

import pytest

from configs import brps_target_socket, xeon_e5_2697v2_socket
from models.core import Core
from models.params import ParamError


def _front_end(core: Core) -> tuple[int, ...]:
    return (core.fetch_block_bytes, core.uop_cache_sets, core.uop_cache_ways, core.uop_cache_way_uops,
            core.uop_cache_window_bytes, core.uop_cache_window_ways)


def test_the_xeon_has_ivy_bridges_decode_paths_and_the_target_none():
    # Intel's optimization manual: 16-byte legacy fetch blocks; a decoded ICache of 32 sets x 8 ways x 6 uops over
    # 32-byte windows, 3 ways a window.
    assert _front_end(xeon_e5_2697v2_socket.core()) == (16, 32, 8, 6, 32, 3)
    target = brps_target_socket.core()
    assert (target.fetch_block_bytes, target.uop_cache_sets) == (0, 0)


@pytest.mark.parametrize("make, message", [
    (lambda: Core(fetch_block_bytes=12), "fetch_block_bytes = 12: must be 0 or a power of two"),
    (lambda: Core(fetch_block_bytes=16, uop_cache_sets=24), "uop_cache_sets = 24: must be 0 or a power of two"),
    (lambda: Core(fetch_block_bytes=16, uop_cache_sets=32, uop_cache_window_bytes=48),
     "uop_cache_window_bytes = 48: must be a power of two"),
    (lambda: Core(fetch_block_bytes=16, uop_cache_sets=32, uop_cache_ways=2, uop_cache_window_ways=3),
     "uop_cache_window_ways = 3 exceeds the 2 ways of a set"),
    (lambda: Core(uop_cache_sets=32), "uop_cache_sets is set but fetch_block_bytes is 0"),
    (lambda: Core(fetch_block_bytes=16, uop_cache_sets=32, uop_cache_window_bytes=512), "uop_cache_window_bytes"),
])
def test_bad_front_end_input_is_a_param_error_naming_it(make, message):
    with pytest.raises(ParamError, match=message):
        make().validate()
