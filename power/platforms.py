"""The project's two sockets as the power model sees them, built from their configs (``configs/``) through
``power.from_config``: the platform is described once, in the configs, and priced from its resolved form.

``brps_target_socket()`` and ``xeon_e5_2697v2_socket()`` are the whole sockets (every core) as their configs
declare them; a run is priced from its own ``config.json`` instead (``power.price_run``).
"""

from __future__ import annotations

from .config import Platform
from .from_config import platform_from_config


def brps_target_socket() -> Platform:
    """One socket of the billion-RPS target (configs/brps_target_socket.py), every core."""
    from configs import brps_target_socket as cfg
    return platform_from_config(cfg.system().to_dict())


def xeon_e5_2697v2_socket() -> Platform:
    """One socket of the Xeon E5-2697 v2 baseline (configs/xeon_e5_2697v2_socket.py), every core."""
    from configs import xeon_e5_2697v2_socket as cfg
    return platform_from_config(cfg.system().to_dict())


# Named operating points (core clock in MHz) of each priced part (Technology.part); voltages come from power.dvfs.
OPERATING_POINTS = {
    "brps-target": {"low": 1500.0, "normal": 2500.0, "turbo": 3500.0},          # paper
    "xeon-e5-2697v2": {"low": 1200.0, "normal": 2700.0, "turbo": 3500.0},       # Intel: min, base, max turbo
}

PLATFORMS = {"brps-target": brps_target_socket, "xeon-e5-2697v2": xeon_e5_2697v2_socket}
