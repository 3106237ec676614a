"""Full-system mode: Linux 6.1 (Debian's linux-source-6.1, `make fs-image`) boots on the simulator's firmware and
devices to its /init, which reports the harts online and powers the machine off. Functional by default; with
`--set mode=detailed` the core, cache and DRAM models time kernel and user instructions alike, and the statistics
split each hart's work by privilege level (system.hart{h}.user/supervisor/machine)."""

from models import System
from models.full_system import FullSystem

from . import ROOT

FS_BUILD = ROOT / "workloads" / "fs" / "build"


def system(harts: int = 1, detailed: bool = False) -> System:
    return System(
        harts=harts,
        # Functional time: one instruction per cycle at this clock (assumed 1 GHz, the clock of the console
        # comparison with qemu-system-riscv64; detailed mode times with System.core's own clock).
        clock="1GHz",
        os_level="fs",
        mode="detailed" if detailed else "functional",
        full_system=FullSystem(kernel=str(FS_BUILD / "Image"), initramfs=str(FS_BUILD / "initramfs.cpio")),
    )
