#!/usr/bin/env python3
"""Where Iridium's 1 MiB GET spends its seconds (results/fs/README.md): Iridium A7, flash reads 20 us, 1 MiB GETs over
TCP, one outstanding (sim-scripts/fs_thesis_method.py's point, restored from a functional checkpoint), with the flash
page program at its 200 us default and at the read latency (20 us). In FS mode all of the guest's memory is the
stack's flash, the kernel's socket buffers included.

    sim-scripts/fs_flash_write_check.py
"""

from __future__ import annotations

import pathlib
import tempfile
import time

from drivers import sim_script
from models.sim import simulate

tm = sim_script.load("fs_thesis_method")  # a sibling script's functions

SIZE, GETS = 1048576, 16


def main() -> int:
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="fs-flash-"))
    c = tm.system("iridium-a7", "", "10ns", "20us", SIZE, 1, "tcp")
    c.mode = "functional"
    c.checkpoint_to = str(tmp / "ck")
    simulate(c)
    for write_latency in ("200us", "20us"):
        s = tm.system("iridium-a7", "", "10ns", "20us", SIZE, GETS, "tcp")
        s.memory.flash.write_latency = write_latency
        s.restore_from = c.checkpoint_to
        s.client.warmup_requests = GETS
        t = time.process_time()
        st = simulate(s).stats
        assert st["client.hits"] == GETS and st["client.misses"] == 0
        print(f"flash write latency {write_latency}: RTT {st['client.latency.mean'] / 1e3:,.1f} us "
              f"({time.process_time() - t:.1f} s CPU)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
