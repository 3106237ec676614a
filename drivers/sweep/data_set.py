"""Which points of a sweep share a data set: the key of the data set a point's checkpoint holds, and whether a
point can restore one (used when points are built and when their checkpoints are prepared)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from models.system import System

from .store import engine_hash, file_hash


def shares_data_set(system: System) -> bool:
    """Can this point restore a shared checkpoint? It needs the client's bulk load (the checkpoint is taken at its
    end) and must not name a checkpoint of its own."""
    return system.client.enabled and system.client.bulk_load and not system.restore_from and \
        not system.checkpoint_to


def data_set_key(config: dict[str, Any]) -> str:
    """The key of the data set a point's checkpoint holds: what a restore refuses to change (the engine's own list),
    the guest binary's content and the engine's. Points with equal keys can restore one checkpoint."""
    from models import _engine

    blob = {"identity": json.loads(_engine.checkpoint_identity(json.dumps(config))),
            "binary": file_hash(config["workload"]["binary"]), "engine": engine_hash()}
    return hashlib.sha256(json.dumps(blob, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:24]
