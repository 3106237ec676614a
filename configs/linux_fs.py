"""Full-system mode: Linux 6.1 (Debian's linux-source-6.1, `make fs-image`) boots on the simulator's firmware and
devices to its /init, which reports the harts online and powers the machine off. Functional by default; with
`--set mode=detailed` the core, cache and DRAM models time kernel and user instructions alike, and the statistics
split each hart's work by privilege level (system.hart{h}.user/supervisor/machine).

With `--arg client=true` /init brings eth0 up and serves the memcached-class server on the kernel's UDP sockets
(one thread per hart, pinned), and the ghost client (over UDP, or TCP with `--arg transport=tcp`) loads `items` items and checks every response to `requests`
measured requests through the virtio-net device; the run ends when the last is answered.

Boot once, measure often: `--set checkpoint_to=DIR` (functional, UDP) writes a checkpoint of the booted system when
the client's load is over; `--set restore_from=DIR` starts there, functionally or with `--arg detailed=true`
(models/engine/engine/src/fs_checkpoint.rs). `--arg platform=mercury-a7` (PLATFORMS) gives the machine a dense
stack's core, caches and memory; `--arg window=1` is the thesis's one outstanding request."""

from models import System
from models.client import Client
from models.full_system import DEFAULT_BOOTARGS, ITEM_HEADER, MIN_CHUNK, FullSystem
from models.tlb import Mmu, Tlb

from . import ROOT, mercury

FS_BUILD = ROOT / "workloads" / "fs" / "build"


# The server's arguments on the kernel command line (/init reads the words after "-- mcd"): a store of 8 MiB per
# instance with 2^12 buckets, small enough for the 256 MiB machine with 8 instances; item_max= (its largest chunk)
# is added for values beyond its default 4 KiB chunk.
SERVER_ARGS = "port=11211 mem=8m buckets=12"


def item_chunk(key_size: int, value_size: int) -> int:
    """The server's chunk for an item (its 56-byte header, key and value): the smallest power of two from 64 B."""
    return max(MIN_CHUNK, 1 << (ITEM_HEADER + key_size + value_size - 1).bit_length())


# The dense servers' stacks as FS machines: the stack's core, caches and memory (configs/mercury.py, iridium.py,
# keyvault.py) under Linux, the kernel's network stack on the virtio-net device instead of the stack's own NIC.
PLATFORMS = ("", "mercury-a7", "mercury-a15", "iridium-a7", "iridium-a15", "keyvault")


def use_platform(s: System, platform: str, latency: str, flash_read: str, core_clock: str = "") -> None:
    """Give `s` the cores, caches and memory of `platform` (Mercury with A7- or A15-class cores at 1 GHz and no L2,
    Iridium's cores with their 2 MB L2 over flash, KeyVault's A15-class cores at 1.5 GHz with the L2 over the stack's
    DRAM); `latency` is the stacked DRAM's closed-page latency, `flash_read` Iridium's flash read latency,
    `core_clock` an A15-class core's clock on Mercury and Iridium (1 GHz by default; 1 or 1.5 GHz in the source)."""
    if platform not in PLATFORMS:
        names = ", ".join(repr(p) for p in PLATFORMS)
        raise ValueError(f"platform = {platform!r}: one of {names}")
    if not platform:
        return
    name, _, kind = platform.partition("-")
    kind = kind or "a15"
    clock = "1.5GHz" if name == "keyvault" else core_clock or "1GHz"
    core = mercury.core(kind, None if kind == "a7" else clock)
    s.core = core
    s.clock = core.clock
    s.caches = mercury.caches(s.harts, name != "mercury", core.clock)
    s.memory = (mercury.memory("flash", read_latency=flash_read) if name == "iridium"
                else mercury.memory("dram3d", latency))
    s.technology = mercury.technology(kind)


def guest_mmu(platform: str) -> Mmu:
    """The core's TLBs over the guest's Sv39 tables (detailed FS mode walks them through the caches). The A7's and
    A15's from ARM's technical reference manuals (Cortex-A7 MPCore: 10-entry instruction and data micro-TLBs, fully
    associative, and a 256-entry 2-way main TLB; Cortex-A15 MPCore: a 32-entry instruction and 32-entry data L1 TLB,
    fully associative, and a 512-entry 4-way L2 TLB; the A15's separate load and store L1 TLBs are one here). Their
    TLBs hold every page size; here each L1 array is given for 4 KB and 2 MB pages alike. Without a platform, the
    declared defaults (Ivy Bridge's). The main TLB's lookup (stlb_latency) and the walk caches keep the declared
    defaults (assumed)."""
    if platform == "mercury-a7" or platform == "iridium-a7":
        micro, main = Tlb(entries=10, assoc=10), Tlb(entries=256, assoc=2)
        return Mmu(enabled=True, levels=3, itlb_4k=micro, itlb_2m=micro, dtlb_4k=micro, dtlb_2m=micro,
                   stlb_4k=main, stlb_2m=main)
    if platform:
        l1, l2 = Tlb(entries=32, assoc=32), Tlb(entries=512, assoc=4)
        return Mmu(enabled=True, levels=3, itlb_4k=l1, itlb_2m=l1, dtlb_4k=l1, dtlb_2m=l1, stlb_4k=l2, stlb_2m=l2)
    return Mmu(enabled=True, levels=3)


def system(harts: int = 1, detailed: bool = False, client: bool = False, items: int = 1024,
           requests: int = 1000, transport: str = "udp", platform: str = "", latency: str = "10ns",
           flash_read: str = "20us", window: int = 32, value_size: int = 0, core_clock: str = "",
           store: str = "", tcp_segments: int = 0) -> System:
    """`platform` (PLATFORMS): a dense server's stack; `window` 1 is the thesis's one outstanding request per core;
    `value_size` the values' bytes (0: the data set's; beyond a frame's, transport 'tcp': the server's item_max= is
    then set to the item's chunk); `store` each server instance's store (the server's mem=; '' = 8m);
    `tcp_segments` Client.tcp_segments."""
    server = SERVER_ARGS.replace("mem=8m", f"mem={store}") if store else SERVER_ARGS
    if value_size:
        chunk = item_chunk(Client().sizes()[0], value_size)
        if chunk > 4096:
            server += f" item_max={chunk}"
    bootargs = f"{DEFAULT_BOOTARGS} -- mcd {server}" if client else DEFAULT_BOOTARGS
    s = System(
        harts=harts,
        # Functional time: one instruction per cycle at this clock (assumed 1 GHz, the clock of the console
        # comparison with qemu-system-riscv64; detailed mode times with System.core's own clock).
        clock="1GHz",
        os_level="fs",
        mode="detailed" if detailed else "functional",
        full_system=FullSystem(kernel=str(FS_BUILD / "Image"), initramfs=str(FS_BUILD / "initramfs.cpio"),
                               bootargs=bootargs),
        client=Client(enabled=client, protocol="memcached", transport=transport, items=items, requests=requests,
                      window=window, value_size=value_size, tcp_segments=tcp_segments),
    )
    use_platform(s, platform, latency, flash_read, core_clock)
    s.core.mmu = guest_mmu(platform)
    return s
