"""The whole servers the end-to-end studies run: one socket, the dual-socket (120 cores, 6 NICs) and the
quad-socket (240 cores, 12 NICs) billion-RPS target, each with the STANDARD workload's knobs (popularity, GET ratio,
EREW or CREW), and the measurement lengths of a reduced and a full run.

The configs themselves live in configs/ (one description per platform); this module only picks one by socket count
and sets the workload, so a study's sweep names a server by `sockets`."""

from __future__ import annotations

import configs
from models.system import System

from . import common

# Socket count -> config module (configs/<name>.py with system(...)).
SERVER_CONFIGS = {1: "brps_target_socket", 2: "brps_target_dual", 4: "brps_target_quad"}
CORES_PER_SOCKET = common.FULL_CORES


def available(sockets: int) -> bool:
    """Whether the config of a `sockets`-socket server exists in this checkout."""
    return SERVER_CONFIGS.get(sockets) in configs.available()


def server(sockets: int = 1, items: int = 1 << 16, requests_per_core: int = 500, popularity: str = "uniform",
           get_ratio: float = 0.95, mode: str = "erew", offered_mpps: float = 0.0, cores: int = 0,
           warm_last_insts: int = 0, warmup_requests: int = 0) -> System:
    """The `sockets`-socket target serving the STANDARD workload (tiny items) with `popularity` ('uniform' or
    'zipf', theta 0.99), `get_ratio` and `mode` ('erew' or 'crew': the client's steering and the server's mode=).
    `cores` > 0 takes a share of a one-socket server (common.target, for tests and microbenchmarks).
    `warmup_requests` > 0 sets client.warmup_requests (a restored run warms its caches over that many)."""
    if sockets not in SERVER_CONFIGS:
        raise ValueError(f"sockets = {sockets}: the target servers have {', '.join(map(str, SERVER_CONFIGS))}")
    if mode not in ("erew", "crew"):
        raise ValueError(f"mode = {mode!r}: must be 'erew' or 'crew'")
    if cores:
        if sockets != 1:
            raise ValueError("cores > 0 takes a share of one socket: sockets must be 1")
        system = common.target(cores, items=items, requests_per_core=requests_per_core,
                               warm_last_insts=warm_last_insts)
    else:
        module = configs.load(SERVER_CONFIGS[sockets])
        harts = CORES_PER_SOCKET * sockets
        system = module.system(items=items, requests=requests_per_core * harts)
        if warm_last_insts:
            system.warm_start_insts = max(0, items * 450 - warm_last_insts)   # ~450 instructions per loaded PUT
    c = system.client
    c.popularity, c.get_ratio, c.mode, c.offered_mpps = popularity, get_ratio, mode, offered_mpps
    if warmup_requests:
        c.warmup_requests = warmup_requests
    system.workload.argv = [a for a in system.workload.argv if not a.startswith("mode=")] + [f"mode={mode}"]
    return common.fit_mem_limit(system)
