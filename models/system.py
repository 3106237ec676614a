"""The simulated machine as a whole: how many harts run which binary, with what memory and limits."""

from __future__ import annotations

import math
import os
import warnings

from .cache import CacheHierarchy
from .client import (
    KVS_BINARY,
    SERVER_RX_BURST,
    Client,
    ServerEvicts,
    check_kvs_server_args,
    kvs_eviction_warning,
    kvs_server_argv,
    kvs_server_memory,
    server_mode,
    stall_window_insts,
)
from .core import Core
from .dram import MemoryController
from .full_system import FullSystem
from .link import SocketLink
from .nic import Nic
from .noc import Noc
from .params import Param, ParamError, SimObject
from .sampling import Sampling
from .socket import Socket
from .technology import Technology


class Workload(SimObject):
    """The program every hart runs (SE mode: a static riscv64 ELF plus its arguments)."""

    binary = Param.Str("", "path of the statically linked riscv64 ELF that every hart runs")
    argv = Param.StrList([], "arguments passed after the program name")
    env = Param.StrList([], "environment strings, NAME=value")
    # The guest's file tree (SE mode; workloads/ABI.md "Files"). Host files are read, never written or followed.
    files = Param.StrList([], "host files or folders mapped read-only into the guest's file tree: 'HOST=GUEST' "
                          "(GUEST an absolute guest path) or 'HOST' (at /<its name>); a folder brings its whole tree")
    scratch = Param.Str("", "absolute guest path of a writable directory that lives in the simulator's memory "
                        "('' = none): what the program writes there is in the run's result (scratch_files) and, "
                        "with scratch_save, written to the host at the end")
    scratch_size = Param.Size("256MiB", "most bytes the scratch directory's files may hold (then ENOSPC)",
                              min="4KiB", max="64GiB")
    scratch_save = Param.Str("", "host folder where the scratch directory's tree is written when the run ends "
                             "('' = discarded with the run)")
    cwd = Param.Str("/", "the guest's working directory (absolute; it must exist in the tree above)")
    stdin = Param.Str("", "host file read as the guest's standard input ('' = an empty pipe)")

    def validate(self) -> None:
        super().validate()
        import pathlib

        guest_paths = []
        for entry in self.files:
            host, sep, guest = entry.partition("=")
            if not host or (sep and not guest):
                raise ParamError(f"Workload.files entry {entry!r}: must be 'HOST' or 'HOST=GUEST'")
            if not pathlib.Path(host).exists():
                raise ParamError(f"Workload.files entry {entry!r}: host path {host!r} does not exist")
            guest = guest or "/" + pathlib.Path(host).resolve().name
            guest_paths.append(self._guest_path("files", guest))
        if self.scratch:
            guest_paths.append(self._guest_path("scratch", self.scratch))
        self._guest_path("cwd", self.cwd)
        if len(set(guest_paths)) != len(guest_paths):
            raise ParamError(f"Workload.files/scratch: two entries at the same guest path ({sorted(guest_paths)})")
        if self.stdin and not pathlib.Path(self.stdin).is_file():
            raise ParamError(f"Workload.stdin = {self.stdin!r}: not a readable host file")
        if self.scratch_save and not self.scratch:
            raise ParamError("Workload.scratch_save is set but Workload.scratch is empty: there is nothing to save")

    @staticmethod
    def _guest_path(name: str, path: str) -> str:
        parts = path.split("/")
        if not path.startswith("/") or any(p in (".", "..") for p in parts) or "\0" in path:
            raise ParamError(f"Workload.{name} guest path {path!r}: must be absolute, without '.' or '..'")
        return "/" + "/".join(p for p in parts if p)


class System(SimObject):
    """Top of the configuration tree handed to the engine."""

    harts = Param.Count(1, "harts (cores) that run the workload, each with its own stack and hart id (with "
                        "`sockets`: the sum of their cores, numbered socket by socket); for a Linux process (an ELF "
                        "with thread-local storage, e.g. static glibc) only hart 0 starts and each clone'd thread "
                        "takes an idle hart, so this is the most threads alive at once",
                        min=1, max=4096)
    clock = Param.Freq("2.5GHz", "clock of every hart when no timing model sets its own; in functional mode "
                       "simulated time advances one cycle per instruction", min="1MHz", max="20GHz")
    mem_limit = Param.Size("4GiB", "most guest memory that may be touched (pages are allocated on first touch)",
                           min="64KiB", max="1TiB")
    unpacked_memory = Param.Size("0B", "most guest memory kept in host memory as whole pages (0: all of it); past it "
                                 "the pages made resident longest ago are packed, their zero bytes dropped, until "
                                 "touched again (the KVS index at 192 Mi items packs to about a tenth). Host memory "
                                 "only: no statistic depends on it. SE mode only", max="1TiB")
    stack_size = Param.Size("1MiB", "stack of each hart (the smallest that can work is two pages: the engine keeps "
                            "the lowest page free below the initial stack of argv, env and auxv)", min="8KiB",
                            max="1GiB")
    quantum = Param.Count(1000, "instructions a hart runs before the next hart gets its turn; harts interleave "
                          "deterministically in hart order (in detailed timing: the hart furthest behind in "
                          "simulated time goes next, the lowest id among equals)", min=1, max=10**7)
    max_insts = Param.Count(0, "stop the run after this many instructions over all harts (0 = no limit)")
    max_time = Param.Time("0s", "stop the run at this simulated time (0 = no limit)")
    seed = Param.Count(1, "seed of every random choice in the run; same config and seed give identical stats")
    misaligned = Param.Enum("fault", "what a misaligned load or store does: 'fault' stops the run (RISC-V lets "
                            "hardware trap); 'allow' performs it, as Linux's trap emulation (and qemu-user) would; "
                            "misaligned atomics always fault", choices=("fault", "allow"))
    trace_file = Param.Str("", "if set, write hart 0's PC, integer and floating-point registers before every "
                           "instruction to this file (for lockstep comparison with qemu-riscv64 -singlestep "
                           "-d cpu,fpu)")
    workload = Param.Child(Workload, "the program the harts run (SE mode)")
    os_level = Param.Enum("se", "the OS level: 'se' (syscall emulation: every hart runs workload.binary at user "
                          "level and the engine answers its Linux system calls) or 'fs' (full system: the harts boot "
                          "full_system.kernel in M/S/U mode on the simulator's firmware and devices); the timing "
                          "models time both alike", choices=("se", "fs"))
    full_system = Param.Child(FullSystem, "what an FS-mode machine boots (System.os_level = 'fs')")
    # Timing (detailed mode) ------------------------------------------------------------------------------------
    mode = Param.Enum("functional", "'functional': instructions only, one cycle each at `clock` (fastest); "
                      "'detailed': the core, cache and DRAM timing models time every instruction once detailed "
                      "timing has started (see detailed_start)", choices=("functional", "detailed"))
    detailed_start = Param.Enum("start", "when detailed timing starts in detailed mode: 'start' (the first "
                                "instruction), 'roi' (the first ROI_BEGIN simulator call) or 'insts' (after "
                                "detailed_start_insts instructions over all harts); before it the run fast-forwards "
                                "functionally", choices=("start", "roi", "insts"))
    detailed_start_insts = Param.Count(0, "instructions (all harts) to fast-forward before detailed timing, when "
                                       "detailed_start = 'insts'", max=10**15)
    warm_caches = Param.Bool(False, "during the fast-forward before detailed timing, feed every memory access to "
                             "the caches: their contents and replacement state warm up, no time is accounted")
    warm_start_insts = Param.Count(0, "with warm_caches, instructions (all harts) run purely functionally before "
                                   "warming begins (0: warm through the whole fast-forward)", max=10**15)
    sampling = Param.Child(Sampling, "statistical sampling of the detailed phase (SMARTS-style: periodic detailed "
                           "windows, functional warming between them); off by default")
    core = Param.Child(Core, "timing model of every hart's core (detailed mode), unless `cores` overrides it "
                       "(socket 0's, see `sockets`)")
    cores = Param.Children(Core, "per-hart cores, hart i on cores[i] (heterogeneous systems); empty: every hart "
                           "gets `core`")
    caches = Param.Child(CacheHierarchy, "socket 0's caches (see `sockets`): private L1I/L1D (and L2) per "
                         "core, shared LLC")
    memory = Param.Child(MemoryController, "socket 0's DRAM controller and channels (see `sockets`)")
    cores_per_cluster = Param.Count(1, "cores per cluster of socket 0 (see `sockets`): a cluster's cores and its "
                                    "LLC slice share a crossbar and a mesh router", min=1, max=64)
    noc = Param.Child(Noc, "socket 0's on-chip network (see `sockets`)")
    sockets = Param.Children(Socket, "the sockets, each with its cores, caches, memory and network; empty: one "
                             "socket described by the flat fields harts, core, cores, caches, memory, "
                             "cores_per_cluster and noc (the common single-socket case)")
    socket_link = Param.Child(SocketLink, "the links joining the sockets (QPI-like, fully connected; detailed mode "
                              "with two or more sockets): lanes, rate, flits, latency, links per pair")
    schedule = Param.Enum("global", "how detailed timing orders the harts' turns: 'global' (every turn goes to the "
                          "hart furthest behind in simulated time, over all sockets) or 'partitioned' (each socket "
                          "is a partition; simulated time is cut in windows as long as socket_link.latency, the "
                          "smallest latency between sockets, and in each window the sockets run in socket order, "
                          "each its own harts furthest behind first until all reach the window's end, and the NICs "
                          "and the client step once at each window's end: the order a run on several host threads "
                          "follows). One socket: both are the same. Functional and "
                          "warming phases always take turns in hart order", choices=("global", "partitioned"))
    partition_order = Param.Enum("socket", "the order the partitions take their turns within each window of the "
                                 "partitioned schedule: 'socket' (socket 0 first) or 'reversed' (the last socket "
                                 "first). A run on several host threads has no such order, so its statistics must "
                                 "not depend on it: 'reversed' is the check of what still does (HOST_THREADS.md); "
                                 "it needs schedule = 'partitioned' on two or more sockets",
                                 choices=("socket", "reversed"))
    host_threads = Param.Count(1, "host threads one run uses (schedule = 'partitioned'); only 1 is built: the "
                               "sockets share one memory system and one guest memory, so their partitions cannot "
                               "yet run at once (issue 24 item 5)", min=1, max=256)
    nic = Param.Child(Nic, "the NIC of a one-NIC system (simulated only when nic.enabled); the shorthand for "
                      "`nics` when that list is empty")
    nics = Param.Children(Nic, "the system's NICs, devices on the bus: NIC k has its registers at the k-th device "
                          "window (workloads/ABI.md) and its stats under system.nic{k}; empty: `nic` alone")
    client = Param.Child(Client, "the ghost client (runs only when client.enabled; needs the NIC)")
    technology = Param.Child(Technology, "power-only parameters of the socket (read by the power model only)")
    checkpoint_to = Param.Str("", "if set, write the whole functional state to this new directory, then carry on: "
                              "when the client's bulk load is over (before its warm-up), at the guest's "
                              "CHECKPOINT call, or after checkpoint_at_insts, whichever comes first")
    checkpoint_at_insts = Param.Count(0, "with checkpoint_to: write it at the end of the scheduling turn in which "
                                      "this many instructions (all harts) are reached, if that comes first (0: off)")
    restore_from = Param.Str("", "if set, start from this checkpoint directory (its pages mapped copy-on-write); "
                             "the run may differ from it only in timing and in the client's measured phase")

    def validate(self) -> None:
        super().validate()
        self._validate_sockets()
        if self.os_level == "fs":
            self._validate_full_system()
            return
        if not self.workload.binary:
            raise ParamError("System.workload.binary is empty: name the riscv64 ELF to run")
        if os.path.basename(self.workload.binary) == KVS_BINARY:
            check_kvs_server_args(self.workload.argv)
            self._check_rings_fit_nics()
        self._validate_timing()
        if self.stack_size * self.harts > self.mem_limit:
            raise ParamError(f"System.stack_size x harts = {self.stack_size * self.harts} bytes exceeds "
                             f"System.mem_limit = {self.mem_limit} bytes")
        self._validate_nics()
        if self.checkpoint_to and self.restore_from:
            raise ParamError("System.checkpoint_to and System.restore_from: a restored run writes no checkpoint "
                             "(restore the checkpoint it would extend instead)")
        if self.client.enabled:
            if not self.active_nics():
                raise ParamError("System.client.enabled needs System.nic.enabled (the client talks through it)")
            self.client.check_server(self.workload.binary)
            mode = server_mode(self.workload.argv)
            if self.client.mode != "auto" and self.client.mode != mode:
                raise ParamError(f"System.client.mode = {self.client.mode!r} but the server runs mode={mode} "
                                 "(its argv): set both the same, or client.mode='auto'")
            self._validate_client_queues()
            self._validate_client_patience()
            self._validate_kvs_data_set()

    def _validate_full_system(self) -> None:
        """FS mode boots a kernel on one socket's harts; what it does not have yet is refused by name."""
        self.full_system.check(self.harts)
        self._validate_timing()
        unsupported = [
            (self.workload.binary != "", "System.workload.binary (FS mode boots System.full_system.kernel)"),
            (bool(self.active_nics()), "a NIC (FS mode's network device is its own virtio-net, which the ghost "
                                       "client reaches without System.nic)"),
            (len(self.socket_list()) > 1, "more than one socket"),
            (self.checkpoint_at_insts > 0, "System.checkpoint_at_insts (an FS checkpoint is written when the "
                                            "client's bulk load is over)"),
            (self.sampling.enabled, "System.sampling"),
            (self.detailed_start != "start" or self.warm_caches, "a fast-forward before detailed timing"),
            (bool(self.trace_file), "System.trace_file"),
            (self.unpacked_memory > 0, "System.unpacked_memory (packed guest pages are built for SE mode)"),
        ]
        for present, what in unsupported:
            if present:
                raise ParamError(f"System.os_level = 'fs' does not take {what}")
        if self.client.enabled:
            self.full_system.check_client(self.client)
            self.full_system.check_server_room(self.client, self.harts)
        elif self.full_system.profile:
            raise ParamError("System.full_system.profile counts the client's measured phase: it needs "
                             "System.client.enabled")
        self._validate_fs_checkpoint()

    def _validate_fs_checkpoint(self) -> None:
        """An FS checkpoint is of a booted system serving the client: written in a functional run when the client's
        bulk load is over (over TCP with every connection quiet), restored functionally or in detail."""
        if not (self.checkpoint_to or self.restore_from):
            return
        if self.checkpoint_to and self.restore_from:
            raise ParamError("System.checkpoint_to and System.restore_from: a restored run writes no checkpoint "
                             "(restore the checkpoint it would extend instead)")
        if not (self.client.enabled and self.client.bulk_load):
            raise ParamError("an FS checkpoint (System.checkpoint_to / restore_from) is of a booted system whose "
                             "client has loaded its items: it needs System.client.enabled and client.bulk_load")
        if self.checkpoint_to and self.mode != "functional":
            raise ParamError("System.checkpoint_to in FS mode needs System.mode = 'functional' (the timing models' "
                             "state is not saved): boot functionally, then restore in detailed mode")

    def queue_ports(self) -> list[tuple[int, int]]:
        """(NIC, port) of every NIC queue in global order, as the engine lays them out (engine net.rs): with every
        NIC's queues 0, one queue per hart spread over all ports in contiguous blocks (NIC 0's first); otherwise
        each NIC's own queues spread over its ports."""
        nics = self.active_nics()
        ports = [max(1, n.ports) for n in nics]
        first = [sum(ports[:k]) for k in range(len(nics))]
        if all(n.queues == 0 for n in nics):
            total = sum(ports)
            out = []
            for q in range(self.harts):
                port = q * total // self.harts
                k = max(i for i, f in enumerate(first) if f <= port)
                out.append((k, port - first[k]))
            return out
        return [(k, local * ports[k] // n.queues) for k, n in enumerate(nics) for local in range(n.queues)]

    def _validate_client_queues(self) -> None:
        """The client needs a queue for every hart; closed loop, it keeps up to Client.window frames outstanding
        per queue and never retransmits, so every frame it may have outstanding on a port must fit that port's RX
        FIFO (a dropped frame would stall the run until Client.stall_rounds fails it)."""
        queues = self.queue_ports()
        if len(queues) < self.harts:
            raise ParamError(f"System.nics: {len(queues)} NIC queues in all but the client needs a queue for every hart "
                             f"(System.harts = {self.harts}): set Nic.queues = 0 (one per hart) or more queues")
        if self.client.offered_mpps > 0:
            return
        nics = self.active_nics()
        for k, port in sorted(set(queues)):
            on_port = queues.count((k, port))
            if self.client.window * on_port > nics[k].rx_fifo_frames:
                where = f"System.nics[{k}]" if self.nics else "System.nic"
                raise ParamError(
                    f"Client.window = {self.client.window} frames per queue x {on_port} queues on port {port} of "
                    f"{where} exceeds its {where}.rx_fifo_frames = {nics[k].rx_fifo_frames}: the closed-loop client "
                    "never retransmits, so a frame the FIFO drops stalls the run; lower Client.window to "
                    f"{nics[k].rx_fifo_frames // on_port} or raise rx_fifo_frames")

    def _validate_client_patience(self) -> None:
        """The client fails a run after Client.stall_rounds scheduling rounds without a response (a lost one).
        Rounds are counted, not time or work: the rounds' instructions must cover a burst of the server's work
        (stall_window_insts), and in detailed mode a round lasts at least System.quantum instructions at the
        fastest core's issue width, where the NICs' latencies must fit twice; otherwise a healthy run fails as a
        lost response."""
        need_insts = stall_window_insts(self.client)
        if self.client.stall_rounds * self.quantum < need_insts:
            raise ParamError(
                f"Client.stall_rounds = {self.client.stall_rounds} rounds of System.quantum = {self.quantum} "
                f"instructions per hart are fewer than the {need_insts:,} a server may spend on one burst of "
                f"frames ({min(self.client.window, SERVER_RX_BURST)} of Client.requests_per_packet = "
                f"{self.client.requests_per_packet}, twice): the client would fail a healthy run as a lost response; "
                f"raise Client.stall_rounds to at least {-(-need_insts // self.quantum)} or System.quantum")
        if self.mode != "detailed":
            return
        fastest = max(c.clock * c.issue_width for c in self.hart_cores())       # instructions per second
        window_ps = self.client.stall_rounds * self.quantum / fastest * 1e12
        for k, n in enumerate(self.active_nics()):
            on_die = n.attach == "on_die"
            one_way = (n.on_die_latency if on_die else n.pcie_latency) + \
                (n.on_die_mmio_latency if on_die else n.mmio_latency) + (n.switch.latency if n.switch.enabled else 0)
            if window_ps < 4 * one_way:
                where = f"System.nics[{k}]" if self.nics else "System.nic"
                need = math.ceil(self.client.stall_rounds * 4 * one_way / window_ps)
                raise ParamError(
                    f"Client.stall_rounds = {self.client.stall_rounds} rounds of System.quantum = {self.quantum} "
                    f"instructions last at least {window_ps / 1e6:.1f} us of simulated time, less than twice a "
                    f"request's round trip through {where} ({one_way / 1e6:.1f} us each way: its "
                    f"{'on_die' if on_die else 'pcie'}_latency, register latency and switch): the client would fail "
                    f"a healthy run as a lost response; raise Client.stall_rounds to at least {need} or "
                    "System.quantum")

    def serves_kvs(self) -> bool:
        """The MICA-style KVS server runs against the ghost client (its log and index hold the client's data set)."""
        return self.client.enabled and os.path.basename(self.workload.binary) == KVS_BINARY

    def server_argv(self) -> list[str]:
        """The guest's arguments as the engine gets them: for the KVS server, its log and index sized from the
        client's data set (one partition per hart) where System.workload.argv gives no size."""
        if self.serves_kvs():
            return kvs_server_argv(self.workload.argv, self.client, self.harts)
        return list(self.workload.argv)

    def to_dict(self) -> dict:
        out = super().to_dict()
        out["workload"]["argv"] = self.server_argv()
        return out

    def _validate_kvs_data_set(self) -> None:
        """The KVS server's storage against the data set: guest memory it cannot have is an error, a log or index
        too small to hold it (explicit sizes) a warning naming them."""
        if not self.serves_kvs():
            return
        argv = self.server_argv()
        need = kvs_server_memory(argv, self.client, self.harts)
        if need > self.mem_limit:
            raise ParamError(f"System.mem_limit = {self.mem_limit} bytes: the KVS server's {self.harts} partitions "
                             f"(index and log for Client.items = {self.client.items:,}) touch about {need} bytes; "
                             "raise System.mem_limit or lower Client.items")
        why = kvs_eviction_warning(argv, self.client, self.harts)
        if why is not None:
            warnings.warn(why, ServerEvicts, stacklevel=3)

    def active_nics(self) -> list[Nic]:
        """The NICs the engine simulates: the enabled entries of `nics`, or `nic` alone when `nics` is empty."""
        if self.nics:
            return [n for n in self.nics if n.enabled]
        return [self.nic] if self.nic.enabled else []

    def _check_rings_fit_nics(self) -> None:
        """The KVS server's rings (rx_ring=, tx_ring=; 128 and 512 by default, as MICA) within every NIC's limit."""
        rings = {"rx_ring": 128, "tx_ring": 512}
        for a in self.workload.argv:
            name, _, value = a.partition("=")
            if name in rings and value.isdigit():
                rings[name] = int(value)
        for k, nic in enumerate(self.active_nics()):
            for name, n in rings.items():
                if n > nic.max_ring_descriptors:
                    raise ParamError(f"System.workload.argv: {name}={n} exceeds NIC {k}'s ring limit "
                                     f"(Nic.max_ring_descriptors = {nic.max_ring_descriptors})")
                if n % nic.rx_desc_fetch and name == "rx_ring":
                    raise ParamError(f"System.workload.argv: rx_ring={n} is not a multiple of NIC {k}'s "
                                     f"Nic.rx_desc_fetch = {nic.rx_desc_fetch} (its descriptor fetches)")

    def _validate_nics(self) -> None:
        if self.nics and self.nic.to_dict() != Nic().to_dict():
            changed = sorted(k for k, v in self.nic.to_dict().items() if Nic().to_dict()[k] != v)
            raise ParamError(f"System.nic.{changed[0]} is set but System.nics lists the NICs: describe them in one "
                             "place (set System.nics.K.<name>; nic is the shorthand for a one-NIC system)")
        nics = self.active_nics()
        for field in ("ddio", "ddio_ways", "register_latency", "steering_base_port"):
            values = {getattr(n, field) for n in nics}
            if len(values) > 1:
                raise ParamError(f"System.nics: every NIC needs the same {field} (the socket's LLC, uncached path "
                                 f"and client share it), not {sorted(values)}")
        if any(n.interface == "zero_copy" for n in nics) and len(self.sockets) > 1:
            raise ParamError("Nic.interface = 'zero_copy' writes frames into a core's own caches: it needs a "
                             f"one-socket system, not System.sockets of {len(self.sockets)}")
        if nics and {n.queues == 0 for n in nics} == {True, False}:
            raise ParamError("System.nics: give every NIC its queues, or none (one queue per hart)")
        ports = sum(n.ports for n in nics)
        if nics and all(n.queues == 0 for n in nics) and ports > self.harts:
            raise ParamError(f"System.nics: {ports} ports in all but only {self.harts} harts (one queue per hart): "
                             "every port needs a queue")

    def _validate_timing(self) -> None:
        if self.mode == "functional":
            if self.detailed_start != "start" or self.warm_caches:
                raise ParamError(f"System.detailed_start = {self.detailed_start!r} / System.warm_caches = "
                                 f"{self.warm_caches} need System.mode = 'detailed' (mode is 'functional')")
        if self.detailed_start == "insts" and self.detailed_start_insts == 0:
            raise ParamError("System.detailed_start = 'insts' needs System.detailed_start_insts > 0")
        if self.detailed_start != "insts" and self.detailed_start_insts:
            raise ParamError(f"System.detailed_start_insts = {self.detailed_start_insts} is only used with "
                             f"System.detailed_start = 'insts', not {self.detailed_start!r}")
        if self.warm_caches and self.detailed_start == "start":
            raise ParamError("System.warm_caches needs a fast-forward to warm in: System.detailed_start must be "
                             "'roi' or 'insts', not 'start'")
        if self.warm_start_insts and not self.warm_caches:
            raise ParamError("System.warm_start_insts is set but System.warm_caches is False")
        if self.sampling.enabled and self.mode != "detailed":
            raise ParamError("System.sampling.enabled samples the detailed phase: it needs System.mode = 'detailed'")
        if self.detailed_start == "insts" and self.warm_start_insts >= self.detailed_start_insts > 0 \
                and self.warm_caches:
            raise ParamError(f"System.warm_start_insts = {self.warm_start_insts} must be below "
                             f"System.detailed_start_insts = {self.detailed_start_insts}")
        sockets = self.socket_list()
        self.socket_link.check_pairs("System.socket_link", len(sockets))
        self._validate_schedule(len(sockets))
        if self.mode == "detailed" and len(sockets) > 1:
            for i, socket in enumerate(sockets[1:], start=1):
                if socket.caches.to_dict() != sockets[0].caches.to_dict():
                    raise ParamError(f"System.sockets[{i}].caches differs from System.sockets[0].caches: the "
                                     "detailed multi-socket model needs every socket's caches alike (one memory "
                                     "system spans them)")
        for i, socket in enumerate(self.socket_list()):
            if self.mode == "detailed":
                clocks = [c.clock for c in (list(socket.core_models) or [socket.core])]
                socket.caches.check_latencies("System" if not self.sockets else f"System.sockets[{i}]", max(clocks))
                timings = socket.memory.resolved_timings()
                if timings["t_rfc"] >= timings["t_refi"]:
                    where = "System.memory" if not self.sockets else f"System.sockets[{i}].memory"
                    raise ParamError(f"{where}.t_refi = {timings['t_refi']} ps is not longer than {where}.t_rfc = "
                                     f"{timings['t_rfc']} ps: every rank would refresh all the time and no access "
                                     "would ever be served (the run hangs); tREFI must exceed tRFC (JEDEC DDR4: "
                                     "7.8 us and 350 ns)")
            if socket.caches.l1d.line_size != 64:
                where = "System.caches" if not self.sockets else f"System.sockets[{i}].caches"
                raise ParamError(f"{where} line_size = {socket.caches.l1d.line_size}: the DRAM model moves "
                                 "64-byte lines (one BL8 burst), so caches must use 64-byte lines")

    def _validate_schedule(self, sockets: int) -> None:
        """The partitioned schedule's window is the latency between sockets; an order of the partitions needs them
        (the partitioned schedule on several sockets); several host threads are refused by name until the partitions
        own their state."""
        if self.schedule == "partitioned" and sockets > 1 and self.socket_link.latency <= 0:
            raise ParamError("System.schedule = 'partitioned' with several sockets needs System.socket_link.latency "
                             "> 0: the partitions' window is that latency")
        if self.partition_order != "socket" and not (self.schedule == "partitioned" and sockets > 1):
            # A check that is not made must not pass for one: the global schedule and one socket have no partitions.
            raise ParamError(f"System.partition_order = {self.partition_order!r} orders the partitioned schedule's "
                             "partitions: it needs schedule = 'partitioned' on two or more sockets (here schedule = "
                             f"{self.schedule!r} on {sockets} socket(s))")
        if self.sampling.enabled and self.schedule == "partitioned" and sockets > 1:
            # The sampler times and warms each instruction in its turn (engine driver.rs, TimingHook::on_inst): a
            # remote miss is not parked until the window's end (kvsim_timing::parked), so the partitions' order
            # would move the statistics again, unsaid.
            raise ParamError("System.sampling.enabled with System.schedule = 'partitioned' on several sockets: the "
                             "sampler does not park remote misses until the window's end, so the partitions' order "
                             "would move the statistics (HOST_THREADS.md); sample under the global schedule")
        if self.host_threads > 1:
            raise ParamError(f"System.host_threads = {self.host_threads}: only 1 is built. The sockets share one "
                             "memory system (directory, LLC slices, links) and one guest memory, which partitions "
                             "on several threads would need to own apart (issue 24 item 5)")

    def hart_cores(self) -> list[Core]:
        """The Core of every hart, socket by socket."""
        return [c for s in self.socket_list() for c in (list(s.core_models) or [s.core] * s.cores)]

    # The socket tree -------------------------------------------------------------------------------------------
    FLAT_SOCKET_FIELDS = ("core", "cores", "caches", "memory", "cores_per_cluster", "noc")

    def socket_list(self) -> list[Socket]:
        """The sockets: `sockets`, or the one socket the flat fields describe when it is empty."""
        if self.sockets:
            return list(self.sockets)
        return [Socket(cores=self.harts, cores_per_cluster=self.cores_per_cluster, core=self.core,
                       core_models=list(self.cores), caches=self.caches, memory=self.memory, noc=self.noc)]

    def nics_on_socket(self, socket: int) -> int:
        """Enabled NICs attached to a socket: System.nics when it lists any, else the one System.nic, on socket 0
        (the engine's rule for which NICs exist)."""
        if self.nics:
            return sum(1 for n in self.nics if n.socket == socket and n.enabled)
        return int(self.nic.enabled and socket == 0)

    def _validate_nic_sockets(self) -> None:
        """Every enabled NIC is attached to a socket that exists (before the sockets count their NICs)."""
        sockets = len(self.socket_list())
        for k, n in enumerate(self.nics or [self.nic]):
            if n.enabled and n.socket >= sockets:
                where = f"System.nics[{k}]" if self.nics else "System.nic"
                raise ParamError(f"{where}.socket = {n.socket}: socket {n.socket} does not exist, the system has "
                                 f"sockets 0..{sockets - 1}")

    def _validate_sockets(self) -> None:
        if self.sockets:
            for name in self.FLAT_SOCKET_FIELDS:
                default = self._params[name].fresh_default()
                value = getattr(self, name)
                same = value == default if not isinstance(value, SimObject) else value.to_dict() == default.to_dict()
                if not same:
                    raise ParamError(f"System.{name} is set but System.sockets lists the sockets: set it on the "
                                     f"socket (System.sockets[i].{'core_models' if name == 'cores' else name}); "
                                     "the flat fields describe socket 0 only when System.sockets is empty")
            total = sum(s.cores for s in self.sockets)
            if self.harts != total:
                raise ParamError(f"System.harts = {self.harts} but System.sockets hold {total} cores: harts must "
                                 "be the sum of the sockets' cores")
        self._validate_nic_sockets()
        for i, socket in enumerate(self.socket_list()):
            socket.check("System" if not self.sockets else f"System.sockets[{i}]", self.nics_on_socket(i))
