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
           "NocConfig", "PcieConfig", "Platform", "Model", "build", "technology", "price", "price_run",
           "price_socket"]


def price(platform, activity=None, **op):
    """Build and evaluate in one call: ``price(platform, activity, core_vdd=..., core_MHz=...)``."""
    return build(platform, activity).evaluate(**op)


def price_run(stats: dict, config: dict):
    """Price a detailed run from its own resolved configuration (config.json: what it simulated, plus the
    power-only ``technology`` section) and its counters. Each core is priced at its own clock and at the supply the
    node's V-f relation gives it (per-core DVFS; ``power.dvfs.core_supplies``). One socket: the evaluated
    ``Result``. Several sockets (``System.sockets``): a ``SystemResult`` with every socket's ``Result`` (its
    counters under ``system.socket{k}.``) and the inter-socket links (``power.links``)."""
    from .from_config import platforms_from_config
    from .links import links_from_config
    from .report import SystemResult

    if config.get("mode") != "detailed":
        raise ValueError("power needs a detailed run (System.mode = 'detailed'): a functional run has no timing "
                         "counters to price")
    platforms = platforms_from_config(config)
    results = [price_socket(stats, p, k) for k, p in enumerate(platforms)]
    if len(results) == 1:
        return results[0]
    seconds = float(stats.get("sim_seconds", 0.0))
    return SystemResult(results, links_from_config(config, len(results), stats, seconds))


def price_socket(stats: dict, platform, socket: int = 0):
    """One socket of a run: its counters (``system.socket{socket}.``), each core at its own V and f."""
    from .dvfs import core_supplies

    model = build(platform, from_stats(stats, platform, socket=socket))
    vdd, mhz = core_supplies(model)
    return model.evaluate(core_vdd=vdd, core_MHz=mhz)
