"""kvsim's power, area and DVFS model (McPAT class); see power/README.md."""

from .activity import Activity, CacheActivity, CoreActivity, DramActivity, NicActivity, NocActivity, from_stats
from .config import (CacheConfig, CoreConfig, DirectoryConfig, DramConfig, DramDevice, MemCtrlConfig, NicConfig,
                     NocConfig, PcieConfig, Platform)
from .model import Model, build
from .tech import technology

__all__ = ["Activity", "CacheActivity", "CoreActivity", "DramActivity", "NicActivity", "NocActivity", "from_stats",
           "CacheConfig", "CoreConfig", "DirectoryConfig", "DramConfig", "DramDevice", "MemCtrlConfig", "NicConfig",
           "NocConfig", "PcieConfig", "Platform", "Model", "build", "technology", "price"]


def price(platform, activity=None, **op):
    """Build and evaluate in one call: ``price(platform, activity, core_vdd=..., core_MHz=...)``."""
    return build(platform, activity).evaluate(**op)
