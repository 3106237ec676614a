"""Full-system (FS) mode's inputs (read by the engine's `full_system.rs` when System.os_level = 'fs'): what the
harts boot and the machine around them.

In FS mode the harts run a real kernel (or a bare-metal program) in M, S and U mode over physical memory; the
simulator plays the firmware (SBI) and the platform devices (CLINT, PLIC, NS16550 UART, the SiFive test device,
virtio-net on virtio-mmio), and generates the device tree. With System.client.enabled the ghost client talks
memcached (UDP or TCP) to the server /init starts, through the virtio-net device and the kernel's network stack. `make fs-image` builds the Linux Image and initramfs this module points at by
default-less paths (workloads/fs/README.md). The timing models see kernel and user instructions alike; the
statistics split them by privilege level (`system.hart{hart}.{level}`).
"""

from __future__ import annotations

from .params import Param, ParamError, SimObject

# The command line qemu's virt board is booted with in the comparison (sim-scripts/fs_boot.py): the 8250 console,
# reboot at once on a panic (the run then stops with the console's last lines), the initramfs unpacked before init.
DEFAULT_BOOTARGS = "earlycon console=ttyS0 panic=-1 initramfs_async=0"

# The server /init starts (workloads/fs/init.c): its defaults, its store's item header and smallest chunk, the
# limits of item_max= (its largest chunk), and the TCP buffers it gives a connection and an instance beyond a
# largest item (STREAM_SLACK) or at least (STREAM_BUF_MIN).
SERVER_DEFAULTS = {"mem": 8 << 20, "item_max": 4 << 10}
ITEM_HEADER, MIN_CHUNK, ITEM_MAX_LIMIT = 56, 64, 2 << 20
STREAM_SLACK, STREAM_BUF_MIN = 1024, 16 << 10
# What the guest's memory holds besides the server's stores and buffers: the kernel, the initramfs and its page
# cache, page tables, thread stacks, socket buffers (assumed 48 MiB: the 6.1 kernel of `make fs-image` reports
# "Memory: 251180K/260096K available" of 256 MiB at boot, about 9 MiB reserved; the rest is a margin for what the
# kernel allocates while serving, not measured).
KERNEL_RESERVE = 48 << 20


def parse_size(v: str) -> int:
    """The server's size syntax: digits, then an optional k, m or g (binary multiples)."""
    digits = len(v) - len(v.lstrip("0123456789"))
    if digits == 0:
        raise ParamError(f"System.full_system.bootargs: cannot read the server size {v!r}")
    shift = {"": 0, "k": 10, "m": 20, "g": 30}.get(v[digits:].lower())
    if shift is None:
        raise ParamError(f"System.full_system.bootargs: cannot read the server size {v!r}")
    return int(v[:digits]) << shift


class FullSystem(SimObject):
    """What an FS-mode machine boots: a Linux Image and initramfs, or a bare-metal ELF; its DRAM and command line."""

    kernel = Param.Str("", "FS mode: the RISC-V Linux kernel Image (arch/riscv/boot/Image) with entry = 'linux', or "
                       "a bare-metal ELF linked in DRAM (0x80000000) with entry = 'machine' or 'supervisor'")
    initramfs = Param.Str("", "FS mode, entry = 'linux': the initramfs (a newc cpio archive) the kernel unpacks as "
                          "its root file system ('' = none)")
    entry = Param.Enum("linux", "how the harts start: 'linux' (hart 0 enters the Image in S mode under the "
                       "simulator's SBI with a0 = 0, a1 = the device tree, the others wait for HSM hart_start), "
                       "'machine' (every hart at the ELF's entry in M mode, no firmware, as qemu's -bios none) or "
                       "'supervisor' (every hart at the ELF's entry in S mode under the SBI)",
                       choices=("linux", "machine", "supervisor"))
    bootargs = Param.Str(DEFAULT_BOOTARGS, "the kernel's command line (the device tree's /chosen/bootargs)")
    memory = Param.Size("256MiB", "the machine's DRAM at 0x80000000, as the device tree reports it (assumed 256 MiB: "
                        "qemu's virt board size in the console comparison; the kernel, initramfs and device tree "
                        "must fit)", min="16MiB", max="8GiB")
    quantum = Param.Count(10_000, "most instructions a hart runs before the FS scheduler looks at the others and "
                          "the devices (assumed 10,000: short against a timer tick, long against a switch); a "
                          "timer interrupt still lands at its tick in functional mode, and within one quantum of "
                          "it in detailed mode", min=1, max=10**7)

    link_rate = Param.Float(10.0, "Gb/s of the wire between the ghost client and the machine's virtio-net device, "
                            "each way (assumed 10: the 10 GbE of the dense servers' studies); a frame takes its "
                            "bytes plus 24 of PHY overhead at this rate and arrives with its last bit (no "
                            "propagation delay: assumed a short direct cable)", min=0.001, max=400.0)
    link_up_delay = Param.Time("1ms", "time from the guest's network driver posting its receive buffers to the "
                               "client's first frame: the link comes up after its driver enables it, as a real "
                               "link does (assumed 1 ms, a short link's bring-up); Linux posts its buffers before "
                               "it has finished bringing the interface up, so a frame at once may find no route to "
                               "its address and be dropped", min="0s")
    net_up_within = Param.Time("1s", "with System.client.enabled: the simulated time by which the guest must bring "
                               "its network device up (driver ready, receive buffers posted) or the run stops "
                               "with the console's last lines (assumed 1 s: over 30x the 30 ms Linux takes to "
                               "reach /init)", min="1us")

    profile = Param.Str("", "with System.client.enabled: write the measured phase's instructions and time by "
                        "program counter to this file (one line per PC: hex PC, instructions, ps; kernel and user "
                        "alike, all harts summed), for sim-scripts/fs_get_breakdown.py to attribute by symbol; a "
                        "detailed run's time per instruction is the hart's clock advance at it, wfi sleep excluded "
                        "('' = off)")

    def server_argv(self) -> list[str]:
        """The server's arguments: the command line's words after `-- mcd` (the kernel hands the words after
        `--` to /init, whose first word `mcd` starts the memcached-class server; workloads/fs/init.c)."""
        words = self.bootargs.split()
        if "--" not in words:
            return []
        rest = words[words.index("--") + 1:]
        return rest[1:] if rest[:1] == ["mcd"] else []

    def check_client(self, client) -> None:
        """The ghost client in FS mode speaks memcached (over UDP or TCP) to the server /init starts."""
        if self.entry != "linux" or "mcd" not in self.bootargs.split("--", 1)[-1].split()[:1]:
            raise ParamError("System.client.enabled in FS mode needs a Linux guest whose /init serves memcached: "
                             "System.full_system.bootargs must end with '-- mcd [port=N mem=SIZE buckets=LOG2]' "
                             f"(it is {self.bootargs!r})")
        if client.protocol != "memcached":
            raise ParamError(f"System.client in FS mode speaks memcached (protocol 'memcached') to the server /init "
                             f"starts, not {client.protocol!r}")

    def check_server_room(self, client, harts: int) -> None:
        """The client's items must fit the server's largest chunk (item_max=), and the server's stores and TCP
        buffers (one instance per hart) the guest's memory."""
        args = dict(SERVER_DEFAULTS)
        for a in self.server_argv():
            name, _, v = a.partition("=")
            if name in args:
                args[name] = parse_size(v)
        k, v = client.sizes()
        item_max, mem = args["item_max"], args["mem"]
        if item_max & (item_max - 1) or not SERVER_DEFAULTS["item_max"] <= item_max <= ITEM_MAX_LIMIT:
            raise ParamError(f"System.full_system.bootargs: the server's item_max={item_max} is not a power of two "
                             f"from {SERVER_DEFAULTS['item_max']} to {ITEM_MAX_LIMIT}")
        need = ITEM_HEADER + k + v
        if need > item_max:
            raise ParamError(f"Client: an item of a {k}-byte key and {v}-byte value takes {need} bytes with its "
                             f"header, more than the server's largest chunk item_max={item_max} (raise item_max= "
                             f"in System.full_system.bootargs, to at most {ITEM_MAX_LIMIT})")
        chunk = max(MIN_CHUNK, 1 << (need - 1).bit_length())
        if mem < chunk:
            raise ParamError(f"System.full_system.bootargs: the server's store mem={mem} cannot hold one "
                             f"{chunk}-byte chunk of the client's items")
        stream = max(STREAM_BUF_MIN, item_max + STREAM_SLACK) if item_max > SERVER_DEFAULTS["item_max"] \
            else STREAM_BUF_MIN
        conns = client.tcp_connections if client.transport == "tcp" else 0
        used = harts * (mem + stream * (1 + conns)) + KERNEL_RESERVE
        if used > self.memory:
            raise ParamError(f"System.full_system.memory = {self.memory} bytes cannot hold {harts} server "
                             f"instance(s) of a {mem}-byte store and {1 + conns} TCP buffer(s) of {stream} bytes "
                             f"besides {KERNEL_RESERVE} bytes for the kernel (assumed): {used} bytes; raise the "
                             "memory or lower the server's mem=")

    def check(self, harts: int) -> None:
        """The FS inputs of a System with `harts` harts (System.os_level = 'fs'). The files are read, and a missing
        one refused, by the engine before the machine is built (as SE mode's binary), so a config naming the image
        of `make fs-image` stays valid before the image is built."""
        if not self.kernel:
            raise ParamError("System.os_level = 'fs' needs System.full_system.kernel: the Linux Image (make fs-image "
                             "builds workloads/fs/build/Image) or a bare-metal ELF")
        if self.initramfs and self.entry != "linux":
            raise ParamError(f"System.full_system.initramfs is set but entry = {self.entry!r}: only a Linux kernel "
                             "unpacks an initramfs")
        if self.memory % (2 << 20):
            raise ParamError(f"System.full_system.memory = {self.memory} bytes: must be a multiple of 2 MiB (the "
                             "device tree sits in the top 2 MiB page)")
        if not 1 <= harts <= 8:
            raise ParamError(f"System.harts = {harts}: FS mode's platform has 1 to 8 harts (CLINT and PLIC contexts)")
