"""Full-system mode: Linux 6.1 (Debian's linux-source-6.1, `make fs-image`) boots on the simulator's firmware and
devices to its /init, which reports the harts online and powers the machine off. Functional by default; with
`--set mode=detailed` the core, cache and DRAM models time kernel and user instructions alike, and the statistics
split each hart's work by privilege level (system.hart{h}.user/supervisor/machine).

With `--arg client=true` /init brings eth0 up and serves the memcached-class server on the kernel's UDP sockets
(one thread per hart, pinned), and the ghost client (over UDP, or TCP with `--arg transport=tcp`) loads `items` items and checks every response to `requests`
measured requests through the virtio-net device; the run ends when the last is answered."""

from models import System
from models.client import Client
from models.full_system import DEFAULT_BOOTARGS, FullSystem

from . import ROOT

FS_BUILD = ROOT / "workloads" / "fs" / "build"


# The server's arguments on the kernel command line (/init reads the words after "-- mcd"): a store of 8 MiB per
# instance with 2^12 buckets, small enough for the 256 MiB machine with 8 instances.
SERVER_ARGS = "port=11211 mem=8m buckets=12"


def system(harts: int = 1, detailed: bool = False, client: bool = False, items: int = 1024,
           requests: int = 1000, transport: str = "udp") -> System:
    bootargs = f"{DEFAULT_BOOTARGS} -- mcd {SERVER_ARGS}" if client else DEFAULT_BOOTARGS
    return System(
        harts=harts,
        # Functional time: one instruction per cycle at this clock (assumed 1 GHz, the clock of the console
        # comparison with qemu-system-riscv64; detailed mode times with System.core's own clock).
        clock="1GHz",
        os_level="fs",
        mode="detailed" if detailed else "functional",
        full_system=FullSystem(kernel=str(FS_BUILD / "Image"), initramfs=str(FS_BUILD / "initramfs.cpio"),
                               bootargs=bootargs),
        client=Client(enabled=client, protocol="memcached", transport=transport, items=items, requests=requests),
    )
