"""kvsim's power, area and DVFS model (McPAT class); see power/README.md."""

from .activity import Activity, CacheActivity, CoreActivity, DramActivity, NicActivity, NocActivity, from_stats
from .config import (
    CacheConfig,
    CoreConfig,
    DirectoryConfig,
    DramConfig,
    DramDevice,
    MemCtrlConfig,
    NicConfig,
    NocConfig,
    PcieConfig,
    Platform,
)
from .model import Model, build
from .tech import technology

__all__ = ["Activity", "CacheActivity", "CoreActivity", "DramActivity", "NicActivity", "NocActivity", "from_stats",
           "CacheConfig", "CoreConfig", "DirectoryConfig", "DramConfig", "DramDevice", "MemCtrlConfig", "NicConfig",
           "NocConfig", "PcieConfig", "Platform", "Model", "build", "technology", "price", "price_run"]


def price(platform, activity=None, **op):
    """Build and evaluate in one call: ``price(platform, activity, core_vdd=..., core_MHz=...)``."""
    return build(platform, activity).evaluate(**op)


def price_run(stats: dict, config: dict):
    """Price a detailed run from its own resolved configuration (config.json: what it simulated, plus the
    power-only ``technology`` section) and its counters. Returns the evaluated Result."""
    from .from_config import platform_from_config

    if config.get("mode") != "detailed":
        raise ValueError("power needs a detailed run (System.mode = 'detailed'): a functional run has no timing "
                         "counters to price")
    platform = platform_from_config(config)
    return build(platform, from_stats(stats, platform)).evaluate()
