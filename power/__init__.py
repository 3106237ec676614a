"""kvsim's power, area and DVFS model (McPAT class); see power/README.md."""

from .activity import Activity, CacheActivity, CoreActivity, DramActivity, NicActivity, NocActivity, from_stats
from .config import (CacheConfig, CoreConfig, DirectoryConfig, DramConfig, DramDevice, MemCtrlConfig, NicConfig,
                     NocConfig, PcieConfig, Platform)
from .model import Model, build
from .tech import technology

__all__ = ["Activity", "CacheActivity", "CoreActivity", "DramActivity", "NicActivity", "NocActivity", "from_stats",
           "CacheConfig", "CoreConfig", "DirectoryConfig", "DramConfig", "DramDevice", "MemCtrlConfig", "NicConfig",
           "NocConfig", "PcieConfig", "Platform", "Model", "build", "technology", "price", "price_run"]


def price(platform, activity=None, **op):
    """Build and evaluate in one call: ``price(platform, activity, core_vdd=..., core_MHz=...)``."""
    return build(platform, activity).evaluate(**op)


def price_run(stats: dict, config: dict, socket: str):
    """Price a detailed run: `socket` (a key of power.platforms.SOCKETS) cut down to the part the run simulated
    (its cores, LLC slices, channels, NIC), fed with the run's counters. Returns the evaluated Result."""
    from .platforms import SOCKETS, simulated_part

    if socket not in SOCKETS:
        raise ValueError(f"power socket {socket!r}: must be one of {', '.join(SOCKETS)}")
    if config.get("mode") != "detailed":
        raise ValueError("power needs a detailed run (System.mode = 'detailed'): a functional run has no timing "
                         "counters to price")
    platform = simulated_part(SOCKETS[socket](), config)
    return build(platform, from_stats(stats, platform)).evaluate()
