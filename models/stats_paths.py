"""Statistics paths, declared once for both languages: where in the stats tree every model writes its counters.

Each `StatGroup` is one kind of place in the tree (a core, an LLC slice, a DRAM channel, a NIC port ...): its path
pattern, with a field for every index (`system.socket{socket}.core{core}`), and the counters the engine writes
below it. Python reads statistics through these groups (`CORE.stat(0, 3, "ipc")` is
`system.socket0.core3.ipc`; an undeclared counter is a KeyError, so a name cannot drift silently), and
`python -m models.codegen` writes the Rust mirror, `kvsim_params::paths` (one function per group giving its prefix,
ending in a dot, ready for a `StatSink`, or for a group with a parent its part below the parent's prefix; and its
counter names). The engine and timing crates build every statistics path from those functions (a literal path in
their sources fails tests/test_stats_paths.py). `tests/test_stats_paths.py` runs short simulations
of the one-socket, ring, 3D-stack and four-socket platforms and checks that the engine writes every declared counter
of every group, so the declaration cannot drift from the engine.

The power model's own outputs (`power.*`, written by power/report.py) are not engine statistics and are not here.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from typing import Iterable, Mapping

_FIELD = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class StatGroup:
    """One place in the stats tree. `pattern` names its fields in braces (`system.nic{nic}.port{port}`; a field is
    an index unless it is listed in `names`, whose values are words such as `l1d`); `counters` are the leaf names
    the engine writes below it (a dotted leaf such as `up_bytes.rx_data` is a breakdown of `up_bytes`). `parent`:
    the group whose prefix this one extends in the Rust API: a model writes its statistics below the prefix it is
    handed (a DRAM below its socket's `mem.`, a router below its network's `noc.`), so the Rust function of a
    group with a parent gives only its own part (`channel(3)` is `channel3.`), appended to the parent's."""

    name: str
    pattern: str
    counters: tuple[str, ...]
    doc: str
    parent: str | None = None
    names: tuple[str, ...] = ()
    fields: tuple[str, ...] = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "fields", tuple(_FIELD.findall(self.pattern)))

    def path(self, *args: int | str) -> str:
        """The group's prefix for these indices, without the trailing dot: `CORE.path(0, 3)` ->
        `system.socket0.core3`."""
        if len(args) != len(self.fields):
            raise TypeError(f"stats path {self.name}: needs {', '.join(self.fields) or 'no index'}, "
                            f"got {len(args)} value(s)")
        return self.pattern.format(**dict(zip(self.fields, args)))

    def stat(self, *args: int | str) -> str:
        """The full name of one counter: `CORE.stat(0, 3, "ipc")`. The counter must be declared (KeyError naming
        the group's counters otherwise)."""
        *indices, counter = args
        if counter not in self.counters:
            raise KeyError(f"stats path {self.name} ({self.pattern}) declares no counter {counter!r}; it has: "
                           f"{', '.join(self.counters)}")
        prefix = self.path(*indices)
        return f"{prefix}.{counter}" if prefix else counter

    def _fields_regex(self) -> str:
        text, pos = "", 0
        for m in _FIELD.finditer(self.pattern):
            text += re.escape(self.pattern[pos:m.start()])
            text += rf"(?P<{m.group(1)}>[a-z0-9_]+)" if m.group(1) in self.names else rf"(?P<{m.group(1)}>\d+)"
            pos = m.end()
        return text + re.escape(self.pattern[pos:])

    def regex(self, counter: str | None = None) -> re.Pattern:
        """Matches the full names of this group's counters (or of one), capturing the fields by name."""
        leaves = [counter] if counter is not None else list(self.counters)
        leaf = "(?:" + "|".join(re.escape(c) for c in leaves) + ")"
        return re.compile(f"{self._fields_regex()}\\.{leaf}" if self.pattern else leaf)

    def below(self) -> re.Pattern:
        """Matches the start of any name below an instance of this group (its prefix and the dot)."""
        return re.compile(self._fields_regex() + r"\.")

    def instances(self, stats: Iterable[str], counter: str, **fixed: int | str) -> list[tuple]:
        """The field values (as tuples, sorted) of every instance of the group that wrote `counter` in `stats`,
        with some fields fixed: `CORE.instances(stats, "ipc", socket=0)` -> [(0, 0), (0, 1), ...]."""
        if counter not in self.counters:
            raise KeyError(f"stats path {self.name} declares no counter {counter!r}")
        rx = self.regex(counter)
        out = set()
        for key in stats:
            m = rx.fullmatch(key)
            if m is None:
                continue
            values = tuple(v if f in self.names else int(v) for f, v in zip(self.fields, m.groups()))
            if all(values[self.fields.index(f)] == v for f, v in fixed.items()):
                out.add(values)
        return sorted(out)

    def values(self, stats: Mapping[str, float], counter: str, **fixed: int | str) -> list[float]:
        """The values of `counter` of every instance present in `stats` (in index order)."""
        return [float(stats[self.stat(*idx, counter)]) for idx in self.instances(stats, counter, **fixed)]

    def rust_tail(self) -> str:
        """The part of the pattern the Rust function formats (below the parent's prefix when it has one)."""
        if self.parent is None:
            return self.pattern
        parent = GROUPS[self.parent].pattern
        return self.pattern[len(parent) + 1:]


# Every cache's lookups and misses are also split by what asked: cores' demand accesses, software prefetches,
# hardware prefetchers (demand_miss_rate leaves both prefetch kinds out).
_CACHE = ("accesses", "back_invalidations", "coherence_invalidations", "demand_accesses", "demand_miss_rate",
          "demand_misses", "evictions", "hits", "hw_prefetch_accesses", "hw_prefetch_misses", "miss_rate", "misses",
          "mpki", "mshr_full", "mshr_merges", "mshr_occupancy_avg", "mshr_wait_ticks", "prefetches", "read_misses",
          "reads", "sw_prefetch_accesses", "sw_prefetch_misses", "upgrades", "write_misses", "writebacks", "writes")
# The LLC's own counters beside a cache's: its misses split by cause (each per thousand instructions too) and its
# remote lines (copies of other sockets' lines). Definitions: LLC_METRICS below.
_LLC = _CACHE + ("demand_mpki", "sw_prefetch_mpki", "hw_prefetch_mpki", "dma_misses", "dma_mpki", "remote_hits",
                 "remote_misses", "remote_fills", "remote_evictions", "remote_invalidations")
_DIRECTORY = ("back_invalidations", "cluster_resolved", "forwards", "gets", "getx", "invalidations", "io_snoops",
              "puts", "putx", "socket_invalidations", "upgrades")
_DDIO = ("core_read_hits", "core_read_misses", "dma_lines_displaced_by_cores", "dma_lines_displaced_by_dma",
         "dma_read_forwards", "dma_read_hits", "dma_read_misses", "enabled", "leaky_evictions", "mmio_accesses",
         "write_allocs", "write_hits", "writebacks_core_data_in_dma_lines", "writebacks_core_lines",
         "writebacks_displaced_by_dma", "writebacks_dma_data", "writes_to_memory")
_TRAFFIC = ("rx_data", "rx_desc_fetch", "rx_writeback", "tx_completion", "tx_data", "tx_desc_fetch")


# The kinds of message between sockets' memory parts (the timing crate's mem/socket_messages.rs, MsgKind::name).
_SOCKET_MESSAGES = ("request", "forward", "data", "grant", "invalidate", "ack", "write_back", "put", "copy_dropped",
                    "dma")


def _breakdown(counter: str) -> tuple[str, ...]:
    return tuple(f"{counter}.{kind}" for kind in _TRAFFIC)


_ALL = [
    StatGroup("run", "", ("sim_seconds", "sim_ticks", "sim_freq", "sim_insts"),
              "the measured interval as gem5 names it (models/sim.py interval_stats: seconds, ticks, ticks per second, "
              "instructions)"),
    StatGroup("client", "client", (
        "deletes", "gets", "hits", "insts_per_request", "insts_per_request_idle", "insts_per_request_work", "items", "key_size", "loss", "lost_packets", "lost_requests",
        "measured_ns", "misses", "offered_mpps", "packets", "puts", "requests", "responses_checked",
        "throughput_mrps", "value_size"), "the ghost client: requests, checking, throughput and loss"),
    StatGroup("client_latency", "client.latency", ("mean", "p50", "p95", "p95_batch_mean", "p95_batch_sd",
                                                  "p95_batches", "p99", "p999", "samples"),
              "the client's round-trip latency distribution (ns)"),
    StatGroup("client_load", "client.load", ("insts", "insts_per_put", "packets", "requests"),
              "the client's bulk load of the store"),
    StatGroup("client_tcp", "client.tcp", ("bare_acks", "connections", "handshakes", "segments_received",
                                           "segments_sent"),
              "the client's TCP connections (Client.transport = 'tcp'), whole run"),
    StatGroup("client_fuzz", "client.fuzz", ("answered", "malformed_responses", "nic_dropped", "sent",
                                             "server_dropped"),
              "the client's fuzz frames (Client.fuzz_frames; result{N} counts the entries answered with result "
              "code N)"),
    StatGroup("client_core", "client.core{core}", ("requests",), "requests the client sent to one server core"),
    StatGroup("client_partition", "client.partition{partition}", ("requests",),
              "requests the client sent to one partition of the store"),
    StatGroup("system", "system", ("insts", "sim_ticks", "stats_dumps", "stats_resets"), "the whole machine"),
    StatGroup("roi", "system.roi", ("begin_insts", "end_insts", "insts"), "the guest's region of interest"),
    StatGroup("timing", "system.timing", ("start_ticks",), "when detailed timing started"),
    StatGroup("sampling", "sampling", ("enabled", "windows", "window_insts", "warmup_insts", "warming_insts",
                                       "timed_insts", "warmed_insts", "warming_cpi", "confidence", "cpi", "cpi_ci",
                                       "ipc", "ipc_low", "ipc_high", "llc_mpki", "llc_mpki_ci"),
              "statistical sampling of the detailed phase (System.sampling; written by sampled runs only)"),
    StatGroup("guest_files", "system.os.fs", ("opens", "bytes_read", "bytes_written"),
              "the SE-mode guest's file tree (Workload.files, scratch): opens and bytes through its calls"),
    StatGroup("guest_memory", "system.mem", ("pages_touched", "resident_pages"), "guest pages allocated on touch"),
    StatGroup("checkpoint", "system.checkpoint", ("bytes",), "the checkpoint a run wrote (System.checkpoint_to)"),
    StatGroup("hart", "system.hart{hart}", (
        "atomics", "branches", "busy_poll_insts", "fences", "fp_ops", "idle_poll_insts", "insts", "jumps", "loads",
        "ntl_hints", "polls_busy", "polls_idle", "prefetches", "sim_ticks", "simcalls", "stores", "syscalls",
        "taken_branches"), "one hart's functional counts (the poll counters: the server's poll-end hints)"),
    StatGroup("hart_level", "system.hart{hart}.{level}", ("insts", "loads", "stores", "ticks"),
              "FS mode: one hart's work at one privilege level (level is user, supervisor or machine): instructions, "
              "of which loads and stores, and the simulated time (ps) they took (in detailed mode the core model's; "
              "time asleep in wfi counts at the level that slept)", names=("level",)),
    StatGroup("hart_traps", "system.hart{hart}.traps", ("interrupts", "to_machine", "to_supervisor"),
              "FS mode: traps one hart took (exceptions and interrupts, by the level that handled them; "
              "interrupts of both)"),
    StatGroup("full_system", "system.fs", ("console_bytes", "sbi_calls", "system_insts"),
              "FS mode: the UART's output, the firmware calls the simulator answered and the system instructions "
              "(CSR accesses, xret, wfi, sfence.vma) the machine finished itself"),
    StatGroup("fs_net", "system.fs.net", (
        "arp_replies", "interrupts", "notifications", "other_frames", "rx_bytes", "rx_dropped", "rx_frames",
        "tx_bytes", "tx_frames", "up_ticks"),
              "FS mode: the virtio-net device (frames and bytes received into the guest and sent by it, frames "
              "dropped while no receive buffer was posted, driver notifications, interrupts raised), the ARP "
              "replies of the client's host, the guest's frames that were neither ARP nor IPv4 to the client, and "
              "when the guest brought the device up (ps)"),
    StatGroup("numa", "system.numa.socket{socket}", ("bytes_placed", "ranges"),
              "the NUMA map: guest memory placed in one socket's memory"),
    StatGroup("socket_link", "system.link{src}_{dst}", (
        "bytes", "flits", "messages", "payload_bw", "payload_bytes", "utilization",
        # What crossed, per kind of message of the memory walk (mem/socket_messages.rs): schedule = 'partitioned' only.
        *(f"messages.{kind}" for kind in _SOCKET_MESSAGES)),
        "the directed inter-socket link from socket src to socket dst", parent="system"),
    StatGroup("system_directory", "system.directory", _DIRECTORY,
              "the machine-wide coherence directory of a multi-socket run"),
    StatGroup("system_ddio", "system.ddio", _DDIO, "direct cache access (DDIO) of a multi-socket run"),
    StatGroup("socket", "system.socket{socket}", (), "one socket (its parts below)"),
    StatGroup("core", "system.socket{socket}.core{core}", (
        "aliased_loads", "alu_ops", "atomics", "branch_mispredicts", "branches", "btb_reads", "btb_writes", "clock",
        "committed_insts", "cpi", "cycles", "div_ops", "fences", "forward_blocked_loads", "forwarded_loads", "fp_add_ops", "fp_cvt_ops",
        "fp_div_ops", "fp_fma_ops", "fp_iq_reads", "fp_iq_wakeups", "fp_iq_writes", "fp_mul_ops", "fp_ops",
        "fetch_group_breaks", "fp_rename_reads", "fp_rename_writes", "fp_rf_reads", "fp_rf_writes",
        "icache_stall_cycles", "idle_poll_cycles", "int_ops", "legacy_decode_insts",
        "int_rf_reads", "int_rf_writes", "ipc", "iq_reads", "iq_wakeups", "iq_writes", "jumps", "load_latency_avg",
        "loads", "lq_occupancy_avg", "mispredict_rate", "mul_ops", "nops",
        # Instructions parked until their window's end (timing/src/parked.rs): schedule = 'partitioned' on
        # several sockets only.
        "parked_insts", "prefetches", "rename_reads",
        "rename_stall_cycles", "rename_writes", "rob_occupancy_avg", "rob_reads", "rob_writes",
        "scheduler_stall_cycles", "serialize_commit_wait_cycles", "serialize_drain_wait_cycles",
        "sq_occupancy_avg", "store_queue_stall_cycles", "stores", "system_ops",
        # Instructions timed in their turn that sent a message to another socket (the park probe missed them):
        # schedule = 'partitioned' only.
        "unparked_crossings", "uop_cache_lookups", "uop_cache_misses"), "a core's timing model (its private caches below it)", parent="socket"),
    StatGroup("private_cache", "system.socket{socket}.core{core}.{cache}", _CACHE + ("page_walk_misses",),
              "a core's private cache: cache is l1i, l1d or l2", names=("cache",), parent="core"),
    StatGroup("prefetcher", "system.socket{socket}.core{core}.{cache}.prefetcher",
              ("issued", "useful", "late", "useless", "dropped", "throttled", "held_by_fence", "held_by_stores"),
              "a private cache's hardware prefetchers (Cache.prefetch): cache is l1d or l2", names=("cache",), parent="private_cache"),
    StatGroup("tlb", "system.socket{socket}.core{core}.{tlb}.{page}",
              ("accesses", "misses", "walks", "walk_cycles", "pte_reads"),
              "a core's TLB for one page size (Mmu): tlb is itlb, dtlb or stlb, page 4k or 2m (the STLB has no "
              "walks of its own)", names=("tlb", "page"), parent="core"),
    StatGroup("mmu", "system.socket{socket}.core{core}.mmu", ("psc_hits",),
              "a core's page walker: walks shortened by a paging-structure cache", parent="core"),
    StatGroup("llc", "system.socket{socket}.llc", _LLC, "the socket's shared LLC, summed over its slices", parent="socket"),
    StatGroup("llc_slice", "system.socket{socket}.llc.slice{slice}", _LLC, "one slice of the shared LLC", parent="llc"),
    StatGroup("directory", "system.socket{socket}.directory", _DIRECTORY, "the socket's coherence directory", parent="socket"),
    StatGroup("ddio", "system.socket{socket}.ddio", _DDIO, "the socket's direct cache access (DDIO)", parent="socket"),
    StatGroup("noc", "system.socket{socket}.noc", (
        "avg_hops", "flits", "hops", "link_utilization_avg", "link_utilization_max", "local_messages",
        "message_hops", "messages"), "the socket's on-chip network (mesh or ring)", parent="socket"),
    StatGroup("router", "system.socket{socket}.noc.router{router}", ("flits",), "one router of the network",
              parent="noc"),
    StatGroup("link", "system.socket{socket}.noc.link{src}_{dst}", ("flits", "messages", "utilization"),
              "the directed link from router src to its neighbour dst", parent="noc"),
    StatGroup("memory", "system.socket{socket}.mem", (
        "avg_queue_delay_ps", "bandwidth_gbps", "bytes", "read_bw", "reads", "write_bw", "writes"),
        "the socket's memory (DDR channels or a 3D stack)", parent="socket"),
    StatGroup("channel", "system.socket{socket}.mem.channel{channel}", (
        "activates", "bus_utilization", "forwarded_reads", "precharges", "read_bw", "read_bytes", "read_latency_avg",
        "read_queue_latency_avg", "reads", "refreshes", "reversed_history", "reversed_other", "reversed_reads",
        "reversed_short", "row_conflicts", "row_hit_rate", "row_hits", "row_misses", "write_bw", "write_bytes",
        "write_drains", "write_queue_latency_avg", "writes"), "one DDR channel",
        parent="memory"),
    StatGroup("stack_port", "system.socket{socket}.mem.port{port}", ("reads", "writes"),
              "one port of a 3D-stacked DRAM", parent="memory"),
    StatGroup("flash_controller", "system.socket{socket}.mem.controller{controller}", ("reads", "writes"),
              "one controller of a 3D-stacked NAND flash", parent="memory"),
    StatGroup("mac_sram", "system.socket{socket}.mem.mac_sram", ("reads", "writes"),
              "the integrated MAC's SRAM holding the NIC rings and buffers (Nic.rings_in = 'mac_sram')", parent="memory"),
    StatGroup("nic", "system.nic{nic}", (
        "rx_batch_size::0", "rx_batch_size::more", "rx_dma_latency_ns", "rx_writebacks", "rx_writebacks_per_frame"),
        "one NIC (rx_batch_size::N is the histogram of packets per poll, N = 0 .. 32, then more)"),
    StatGroup("nic_port", "system.nic{nic}.port{port}", (
        "rx_bytes", "rx_drops", "rx_fifo_overflows", "rx_frames", "rx_frames_per_s", "rx_no_match", "rx_too_long",
        "rx_wire_gbps", "tx_bad_len", "tx_bytes", "tx_frames", "tx_wire_gbps"), "one Ethernet port of a NIC", parent="nic"),
    StatGroup("nic_queue", "system.nic{nic}.queue{queue}", (
        "io_lines", "rx_batch_max", "rx_batch_mean", "rx_batches", "rx_drops", "rx_frames", "tx_doorbells",
        "tx_frames"),
        "one RX/TX queue pair of a NIC", parent="nic"),
    StatGroup("pcie", "system.nic{nic}.pcie", (
        "down_busy_ps", "down_bytes", "down_dllps", "read_tag_waits", "tlps", "tlps.completion", "tlps.mem_read",
        "tlps.mem_write", "up_busy_ps", "up_bytes", "up_dllps", *_breakdown("down_bytes"), *_breakdown("up_bytes"),
        *_breakdown("up_tlps")), "a NIC's PCIe link (up: device to host)", parent="nic"),
    StatGroup("kvd_switch", "system.nic{nic}.switch", (
        "down_busy_ps", "down_frames", "down_wire_bytes", "share_gbps", "up_busy_ps", "up_frames", "up_wire_bytes"),
        "KeyVault's key-value distributor switch in front of a NIC", parent="nic"),
    StatGroup("zero_copy", "system.nic{nic}.zc", ("rx_latency_ns", "rx_lines", "tx_lines"),
              "a zero-copy NIC's (Nic.interface) transfers", parent="nic"),
    StatGroup("on_die", "system.nic{nic}.on_die", (
        "down_busy_ps", "down_bytes", "transfers", "up_busy_ps", "up_bytes", *_breakdown("down_bytes"),
        *_breakdown("up_bytes")), "an integrated MAC's on-die port (Nic.attach = 'on_die')", parent="nic"),
]
GROUPS: dict[str, StatGroup] = {g.name: g for g in _ALL}

# The definitions a report states beside the metrics it plots (cite them by key: `METRIC_DEFINITIONS["llc.demand_mpki"]`).
LLC_METRICS: dict[str, str] = {
    "llc.misses": "LLC lookups at a line's home slice that missed and went to memory (a DDIO write allocation counts "
                  "as a miss); copies of other sockets' lines are counted apart (remote_*)",
    "llc.demand_mpki": "LLC misses of the cores' demand accesses (loads, stores, atomics, instruction fetches and the "
                       "page walks they cause) per thousand instructions of the socket's cores",
    "llc.sw_prefetch_mpki": "LLC misses of software prefetch instructions (prefetch.r/.w/.i, MICA's prefetchnta) "
                            "per thousand instructions",
    "llc.hw_prefetch_mpki": "LLC misses of the private caches' hardware prefetchers per thousand instructions "
                            "(zero with the prefetchers off, the default)",
    "llc.dma_mpki": "DMA accesses that missed the LLC (DDIO write allocations, DMA writes to memory with DDIO off, "
                    "DMA reads served by memory) per thousand instructions; the four split MPKIs sum to llc.mpki",
    "llc.remote_hits": "reads by a socket's cores of lines homed on another socket that the socket's own LLC copy "
                       "answered (they did not cross the inter-socket link); remote_misses went on to the home",
}
METRIC_DEFINITIONS: dict[str, str] = {
    **LLC_METRICS,
    "client.insts_per_request": "instructions of all harts in the measured phase per measured request: request "
                                "processing and idle polling together",
    "client.insts_per_request_work": "instructions of the server's polls that found frames (receiving, processing "
                                     "and answering them, and the poll itself) per measured request",
    "client.insts_per_request_idle": "instructions of the server's polls that found no frame (idle polling) per "
                                     "measured request; work + idle is insts_per_request less the instructions "
                                     "since each hart's last poll ended",
    "client.throughput_mrps": "the highest offered load with < 1% loss (drivers/capacity.py), in M requests/s",
    "steady.throughput": "at the capacity's offered load, measured requests answered per second over a window that "
                         "grows until the 95% interval (batch means of 30 batches of equal request counts, start-up "
                         "and drain left out) is within +-2% and the busiest core is saturated "
                         "(drivers/steady_state.py); with several seeds, their mean and the t-interval over the seeds",
    "steady.p95_ns": "the 95th percentile round trip (client send to client receive) of that window's measured "
                     "requests; its 95% interval from the p95s of 30 batches of the responses in the order they came "
                     "back (t x sd / sqrt(30)); with several seeds, the seeds' mean and t-interval",
}

RUN, CLIENT, CLIENT_LATENCY = GROUPS["run"], GROUPS["client"], GROUPS["client_latency"]
CLIENT_LOAD, CLIENT_CORE, CLIENT_PARTITION = GROUPS["client_load"], GROUPS["client_core"], GROUPS["client_partition"]
SYSTEM, ROI, GUEST_MEMORY = GROUPS["system"], GROUPS["roi"], GROUPS["guest_memory"]
HART, NUMA, SOCKET_LINK = GROUPS["hart"], GROUPS["numa"], GROUPS["socket_link"]
HART_LEVEL, HART_TRAPS, FULL_SYSTEM = GROUPS["hart_level"], GROUPS["hart_traps"], GROUPS["full_system"]
# The values of HART_LEVEL's `level` (the os crate's full_system::LEVELS writes them).
PRIVILEGE_LEVELS = ("user", "supervisor", "machine")
SYSTEM_DIRECTORY, SYSTEM_DDIO = GROUPS["system_directory"], GROUPS["system_ddio"]
TIMING, CHECKPOINT, SAMPLING = GROUPS["timing"], GROUPS["checkpoint"], GROUPS["sampling"]
SOCKET, CORE, PRIVATE_CACHE = GROUPS["socket"], GROUPS["core"], GROUPS["private_cache"]
PREFETCHER, TLB, MMU = GROUPS["prefetcher"], GROUPS["tlb"], GROUPS["mmu"]
LLC, LLC_SLICE, DIRECTORY, DDIO = GROUPS["llc"], GROUPS["llc_slice"], GROUPS["directory"], GROUPS["ddio"]
NOC, ROUTER, LINK = GROUPS["noc"], GROUPS["router"], GROUPS["link"]
MEMORY, CHANNEL, STACK_PORT = GROUPS["memory"], GROUPS["channel"], GROUPS["stack_port"]
FLASH_CONTROLLER, MAC_SRAM = GROUPS["flash_controller"], GROUPS["mac_sram"]
KVD_SWITCH, ZERO_COPY = GROUPS["kvd_switch"], GROUPS["zero_copy"]
NIC, NIC_PORT, NIC_QUEUE, PCIE, ON_DIE = (GROUPS[n] for n in ("nic", "nic_port", "nic_queue", "pcie", "on_die"))


def sockets(stats: Iterable[str]) -> list[int]:
    """The sockets a run reported (those with any statistic below `system.socket{k}.`), in order."""
    below = SOCKET.below()
    return sorted({int(m["socket"]) for key in stats if (m := below.match(key)) is not None})


def _check_declarations() -> None:
    for g in _ALL:
        assert g.name.isidentifier() and len(set(g.counters)) == len(g.counters), g.name
        assert set(g.names) <= set(g.fields), g.name
        assert all(f in string.ascii_lowercase + "_" for f in "".join(g.fields)), g.name
        if g.parent is not None:
            assert g.pattern.startswith(GROUPS[g.parent].pattern + "."), g.name


_check_declarations()
