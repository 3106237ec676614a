"""Activity inputs of the power model: event counts per structure over a measured interval.

The schema is a tree of dataclasses (``Activity``) whose fields are plain counts. ``from_stats`` builds it from a
kvsim stats dict (flat names as in ``stats.json``), reading every counter through the statistics paths declared in
``models/stats_paths.py`` (the engine writes the same names; a test checks it). For socket ``s``:

Run-level
    ``sim_seconds`` (RUN)               simulated time of the interval (required)
    ``client.requests`` (CLIENT)        requests answered in the interval (for energy per request; a run without the
                                        ghost client has none: 0, and no energy per request)

Per core i (CORE, ``system.socket{s}.core{i}.``)
    ``cycles``, ``committed_insts``, ``int_ops``, ``fp_ops``, ``mul_ops`` (mul + div), ``loads``, ``stores``,
    ``branches``, ``branch_mispredicts``, ``rob_reads``, ``rob_writes``, ``rename_reads``, ``rename_writes``,
    ``fp_rename_reads``, ``fp_rename_writes``, ``iq_reads``, ``iq_writes``, ``iq_wakeups``, ``fp_iq_reads``,
    ``fp_iq_writes``, ``fp_iq_wakeups``, ``int_rf_reads``, ``int_rf_writes``, ``fp_rf_reads``, ``fp_rf_writes``,
    ``btb_reads``, ``btb_writes``; its private caches (PRIVATE_CACHE) ``l1i.reads``, ``l1i.misses``, ``l1d.reads``,
    ``l1d.writes``, ``l1d.read_misses``, ``l1d.write_misses``, and for a private L2 ``l2.reads``, ``l2.writes``,
    ``l2.read_misses``, ``l2.write_misses``

TLBs (per core): with the TLB model on (``Mmu.enabled``) its counters are read (TLB ``{itlb,dtlb}.{4k,2m}.accesses``
    and ``misses``, summed over page sizes). Without it the lookups are derived from what the core counts: every instruction-cache access looks up the ITLB (``itlb.accesses`` = ``l1i.reads``) and every
    load and store the DTLB (``dtlb.accesses`` = ``loads`` + ``stores``). Misses are not simulated and are taken as
    none (``TLB_MISSES_ASSUMED``, an assumed value: the KVS keeps its data in the hugepage arena of workloads/ABI.md,
    so misses are rare, but their number is not measured; a miss costs one TLB write in the model).

FP (per core): when the core reports its FP classes (``fp_add_ops``, ``fp_mul_ops``, ``fp_fma_ops``,
    ``fp_cvt_ops``, ``fp_div_ops``) the FP counters are derived from them (``derive_fp``), not read: ``fp_ops`` is
    their sum; every FP instruction passes the FP issue queue once (reads, writes) and writes one result (FP rename
    write, register-file write, wakeup); its source operands (FP rename and register-file reads) are 2 for add,
    multiply and divide, 3 for FMA and 1 for a conversion (the RISC-V formats; a square root, counted with the
    divides, has 1: an upper bound by one operand each)

Shared cache (LLC, ``system.socket{s}.llc.``, summed over slices): ``reads``, ``writes``, ``read_misses``,
    ``write_misses``, ``writebacks``

Directory: the engine's coherence directory (DIRECTORY, ``system.socket{s}.directory.``; on several sockets one
    machine-wide directory, SYSTEM_DIRECTORY ``system.directory.``, whose requests are shared evenly by the sockets:
    lines are homed by address, interleaved over the sockets): ``gets``, ``getx``, ``upgrades``, ``puts``, ``putx``
    (every request reads its entry: reads = their sum; each also changes the entry, as does a
    ``back_invalidations``: writes = the sum plus back-invalidations)

On-chip network (NOC, ``system.socket{s}.noc.``, a mesh or a ring): ``flits`` (flits injected), ``hops``
    (flit-hops: router traversals)

Memory: DDR channels (CHANNEL, ``system.socket{s}.mem.channel{k}.``): ``reads``, ``writes`` (bursts),
    ``activates``, ``precharges``, ``refreshes``. A 3D-stacked DRAM (``System.memory.kind = 'dram3d'``; STACK_PORT,
    ``system.socket{s}.mem.port{k}.``, summed over its ports): ``reads``, ``writes``; its banks are closed-page
    (Gutierrez et al., ASPLOS 2014), so every access activates and precharges a row; it counts no refreshes (the
    model then prices refresh at one per tREFI). A 3D-stacked flash (``'flash'``; FLASH_CONTROLLER,
    ``system.socket{s}.mem.controller{k}.``): its controllers' ``reads`` and ``writes`` are the memory traffic (no
    rows to open); the power platform has no flash device model and prices DDR devices in its place (a gap of
    power/from_config, not of the counts).

NICs (NIC_PORT ``system.nic{n}.port{p}.``, summed over the ports): ``rx_bytes``, ``tx_bytes``, ``rx_frames``,
    ``tx_frames``; PCIe (PCIE ``system.nic{n}.pcie.``): ``tlps``, ``up_bytes``, ``down_bytes``; a NIC whose MAC is
    on the die (ON_DIE ``system.nic{n}.on_die.``) has no PCIe link to price

Missing counters: a priced component whose counters are absent is an error (``MissingCounters``, naming the
component and the paths), never a zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from models import stats_paths as paths

CORE_COUNTERS = (
    "cycles", "committed_insts", "int_ops", "fp_ops", "mul_ops", "loads", "stores", "branches",
    "branch_mispredicts", "rob_reads", "rob_writes", "rename_reads", "rename_writes", "fp_rename_reads",
    "fp_rename_writes", "iq_reads", "iq_writes", "iq_wakeups", "fp_iq_reads", "fp_iq_writes", "fp_iq_wakeups",
    "int_rf_reads", "int_rf_writes", "fp_rf_reads", "fp_rf_writes", "btb_reads", "btb_writes",
)
# A core's private caches: the cache (PRIVATE_CACHE's `cache` field) and the counters read from it.
PRIVATE_CACHE_COUNTERS = {"l1i": ("reads", "misses"), "l1d": ("reads", "writes", "read_misses", "write_misses")}
L2_COUNTERS = ("reads", "writes", "read_misses", "write_misses")
FP_CLASSES = ("fp_add_ops", "fp_mul_ops", "fp_fma_ops", "fp_cvt_ops", "fp_div_ops")
# Source operands per FP class (RISC-V formats: add/sub/min/max/compare/sign-injection 2, mul 2, FMA 3, conversions
# and moves 1, divide 2; square root, which shares the divide class, has 1).
FP_SOURCES = {"fp_add_ops": 2, "fp_mul_ops": 2, "fp_fma_ops": 3, "fp_cvt_ops": 1, "fp_div_ops": 2}
# Assumed, not measured (the engine has no TLB model; see the module doc): no TLB misses.
TLB_MISSES_ASSUMED = 0.0
# The page sizes the timing model's TLBs report (models/timing/src/tlb.rs SIZE_NAMES).
TLB_PAGE_SIZES = ("4k", "2m")
# The shared cache and the directory the engine runs, by the names the power platform gives them.
LLC = "llc"
DIRECTORY = "directory"
DIRECTORY_REQUESTS = ("gets", "getx", "upgrades", "puts", "putx")
CACHE_COUNTERS = ("reads", "writes", "read_misses", "write_misses", "writebacks")
NOC_COUNTERS = ("flits", "hops")
DDR_COUNTERS = ("reads", "writes", "activates", "precharges", "refreshes")
NIC_PORT_COUNTERS = {"rx_bytes": "rx_bytes", "tx_bytes": "tx_bytes", "rx_packets": "rx_frames",
                     "tx_packets": "tx_frames"}
PCIE_COUNTERS = ("tlps", "up_bytes", "down_bytes")


class MissingCounters(KeyError, ValueError):
    """A priced component's counters are not in the stats: names the component and every missing path (a KeyError
    and a ValueError: bad input to the power model)."""

    def __init__(self, component: str, missing: list[str]):
        self.component, self.missing = component, list(missing)
        super().__init__(component)

    def __str__(self) -> str:
        shown = ", ".join(self.missing[:20]) + (f" ... ({len(self.missing)} in all)" if len(self.missing) > 20 else "")
        return (f"power.activity: the {self.component} is priced, but the stats lack its counters: {shown} (a "
                "missing counter is never taken as zero; check the run was detailed and the statistics paths in "
                "models/stats_paths.py)")


@dataclass
class CoreActivity:
    cycles: float = 0.0
    committed_insts: float = 0.0
    int_ops: float = 0.0
    fp_ops: float = 0.0
    mul_ops: float = 0.0
    loads: float = 0.0
    stores: float = 0.0
    branches: float = 0.0
    branch_mispredicts: float = 0.0
    rob_reads: float = 0.0
    rob_writes: float = 0.0
    rename_reads: float = 0.0
    rename_writes: float = 0.0
    fp_rename_reads: float = 0.0
    fp_rename_writes: float = 0.0
    iq_reads: float = 0.0
    iq_writes: float = 0.0
    iq_wakeups: float = 0.0
    fp_iq_reads: float = 0.0
    fp_iq_writes: float = 0.0
    fp_iq_wakeups: float = 0.0
    int_rf_reads: float = 0.0
    int_rf_writes: float = 0.0
    fp_rf_reads: float = 0.0
    fp_rf_writes: float = 0.0
    btb_reads: float = 0.0
    btb_writes: float = 0.0
    itlb_accesses: float = 0.0
    itlb_misses: float = 0.0
    dtlb_accesses: float = 0.0
    dtlb_misses: float = 0.0
    l1i_reads: float = 0.0
    l1i_misses: float = 0.0
    l1d_reads: float = 0.0
    l1d_writes: float = 0.0
    l1d_read_misses: float = 0.0
    l1d_write_misses: float = 0.0
    l2_reads: float = 0.0
    l2_writes: float = 0.0
    l2_read_misses: float = 0.0
    l2_write_misses: float = 0.0


@dataclass
class CacheActivity:
    reads: float = 0.0
    writes: float = 0.0
    read_misses: float = 0.0
    write_misses: float = 0.0
    writebacks: float = 0.0


@dataclass
class NocActivity:
    flits: float = 0.0
    hops: float = 0.0


@dataclass
class DramActivity:
    reads: float = 0.0
    writes: float = 0.0
    activates: float = 0.0
    precharges: float = 0.0
    refreshes: float = 0.0


@dataclass
class NicActivity:
    rx_bytes: float = 0.0
    tx_bytes: float = 0.0
    rx_packets: float = 0.0
    tx_packets: float = 0.0
    pcie_tlps: float = 0.0
    pcie_bytes: float = 0.0


@dataclass
class Activity:
    """Counts over an interval of ``seconds``. ``cores`` has one entry per core (or one entry applied to every
    core of a homogeneous chip, as McPAT's homogeneous mode does)."""

    seconds: float
    cores: list[CoreActivity] = field(default_factory=list)
    caches: dict[str, CacheActivity] = field(default_factory=dict)
    directories: dict[str, CacheActivity] = field(default_factory=dict)
    nocs: dict[str, NocActivity] = field(default_factory=dict)
    dram: DramActivity = field(default_factory=DramActivity)
    nic: NicActivity = field(default_factory=NicActivity)
    requests: float = 0.0
    missing: list[str] = field(default_factory=list)

    def validate(self) -> None:
        if not self.seconds > 0:
            raise ValueError(f"activity.seconds={self.seconds!r} is out of range: allowed > 0")

    def core(self, i: int) -> CoreActivity:
        if not self.cores:
            return CoreActivity()
        return self.cores[i] if len(self.cores) > 1 else self.cores[0]


class _Reader:
    """Reads counters for one component at a time; the missing ones of a component raise together."""

    def __init__(self, stats: dict):
        self.stats = stats
        self.missing: list[str] = []

    def __call__(self, name: str) -> float:
        if name in self.stats:
            return float(self.stats[name])
        self.missing.append(name)
        return 0.0

    def check(self, component: str) -> None:
        if self.missing:
            missing, self.missing = self.missing, []
            raise MissingCounters(component, missing)


def from_stats(stats: dict, platform, *, socket: int = 0) -> Activity:
    """Build the activity of one socket from a flat kvsim stats dict (see the module docstring for names). A priced
    component without its counters raises MissingCounters."""
    get = _Reader(stats)
    seconds = get(paths.RUN.stat("sim_seconds"))
    get.check("run")
    if seconds <= 0:
        raise ValueError("power.activity.from_stats: sim_seconds is not > 0; cannot turn counts into power")
    cores = [_core(get, platform, socket, i) for i in range(platform.cores)]
    if platform.core.fp_issue_width == 0 and any(c.fp_ops for c in cores):
        raise ValueError(f"power.activity: socket {socket}'s cores executed {sum(c.fp_ops for c in cores):,.0f} FP "
                         "operations but the priced part has no FPU (Technology.fpu = False): price it with an FPU, "
                         "or run a workload without FP instructions")
    caches = {}
    for c in platform.caches:
        if c.name != LLC:
            raise ValueError(f"power.activity: the platform's shared cache {c.name!r} has no statistics path: the "
                             f"engine's shared cache is {LLC!r} (models/stats_paths.py LLC)")
        caches[c.name] = CacheActivity(**{k: get(paths.LLC.stat(socket, k)) for k in CACHE_COUNTERS})
        get.check(f"shared cache {c.name} of socket {socket}")
    dirs = {d.name: _directory(get, d.name, socket) for d in platform.directories}
    if len(platform.nocs) > 1:
        raise ValueError(f"power.activity: the platform has {len(platform.nocs)} on-chip networks; the engine runs "
                         "one per socket (models/stats_paths.py NOC)")
    nocs = {}
    for n in platform.nocs:
        nocs[n.name] = NocActivity(**{k: get(paths.NOC.stat(socket, k)) for k in NOC_COUNTERS})
        get.check(f"on-chip network ({n.name}) of socket {socket}")
    dram = _memory(get, platform, socket)
    nic = _nic(get, platform)
    # Not a priced component: a run without the ghost client answers no requests (no energy per request).
    requests = float(stats.get(paths.CLIENT.stat("requests"), 0.0))
    return Activity(seconds=seconds, cores=cores, caches=caches, directories=dirs, nocs=nocs, dram=dram, nic=nic,
                    requests=requests)


def _core(get: _Reader, platform, socket: int, i: int) -> CoreActivity:
    fp = derive_fp(get.stats, paths.CORE.path(socket, i) + ".")
    kw = {n: fp[n] if n in fp else get(paths.CORE.stat(socket, i, n)) for n in CORE_COUNTERS}
    caches = dict(PRIVATE_CACHE_COUNTERS, **({"l2": L2_COUNTERS} if platform.core.l2 is not None else {}))
    for cache, counters in caches.items():
        for k in counters:
            kw[f"{cache}_{k}"] = get(paths.PRIVATE_CACHE.stat(socket, i, cache, k))
    get.check(f"core {i} of socket {socket}")
    kw.update(_tlbs(get.stats, socket, i, kw))
    return CoreActivity(**kw)


def _tlbs(stats, socket: int, i: int, kw: dict[str, float]) -> dict[str, float]:
    """ITLB and DTLB lookups and misses: the TLB model's own counters (summed over page sizes) when the run had
    one (`Mmu.enabled`), else derived from the core's accesses with TLB_MISSES_ASSUMED misses."""
    out = {}
    for tlb, derived in (("itlb", kw["l1i_reads"]), ("dtlb", kw["loads"] + kw["stores"])):
        # Direct look-ups, not a scan of every statistic: this runs for every core of every priced run.
        pages = [p for p in TLB_PAGE_SIZES if paths.TLB.stat(socket, i, tlb, p, "accesses") in stats]
        if pages:
            out[f"{tlb}_accesses"] = sum(float(stats[paths.TLB.stat(socket, i, tlb, p, "accesses")]) for p in pages)
            out[f"{tlb}_misses"] = sum(float(stats[paths.TLB.stat(socket, i, tlb, p, "misses")]) for p in pages)
        else:
            out[f"{tlb}_accesses"], out[f"{tlb}_misses"] = derived, TLB_MISSES_ASSUMED
    return out


def _directory(get: _Reader, name: str, socket: int) -> CacheActivity:
    stats = get.stats
    if name != DIRECTORY:
        raise ValueError(f"power.activity: the platform's directory {name!r} has no statistics path: the engine's "
                         f"is {DIRECTORY!r} (models/stats_paths.py DIRECTORY)")
    group, args, share = paths.DIRECTORY, (socket,), 1.0
    if paths.DIRECTORY.stat(socket, "gets") not in stats and paths.SYSTEM_DIRECTORY.stat("gets") in stats:
        # Several sockets: one machine-wide directory, its lines homed by address over the sockets.
        group, args, share = paths.SYSTEM_DIRECTORY, (), 1.0 / max(1, len(paths.sockets(stats)))
    req = sum(get(group.stat(*args, k)) for k in DIRECTORY_REQUESTS)
    back = get(group.stat(*args, "back_invalidations"))
    get.check(f"coherence directory of socket {socket}")
    return CacheActivity(reads=share * req, writes=share * (req + back))


def _memory(get: _Reader, platform, socket: int) -> DramActivity:
    dram = DramActivity()
    kind = getattr(platform, "memory", "ddr")
    if kind == "ddr":
        channels = platform.dram.channels if platform.dram is not None else \
            platform.mc.count * platform.mc.channels_per_mc
        for k in range(channels):
            for f_ in DDR_COUNTERS:
                setattr(dram, f_, getattr(dram, f_) + get(paths.CHANNEL.stat(socket, k, f_)))
        get.check(f"DDR memory of socket {socket} ({channels} channel(s))")
        return dram
    if kind in ("dram3d", "flash"):
        group, what = (paths.STACK_PORT, "3D-stacked DRAM") if kind == "dram3d" else \
            (paths.FLASH_CONTROLLER, "3D-stacked flash")
        ports = group.instances(get.stats, "reads", socket=socket) or [(socket, 0)]
        for _, k in ports:
            dram.reads += get(group.stat(socket, k, "reads"))
            dram.writes += get(group.stat(socket, k, "writes"))
        get.check(f"{what} of socket {socket}")
        if kind == "dram3d":
            # Closed page: every access opens its row and closes it again.
            dram.activates = dram.precharges = dram.reads + dram.writes
        return dram
    raise ValueError(f"power.activity: socket {socket}'s memory is {kind!r} (System.memory.kind): the power model "
                     "has no device model for it, so it cannot be priced")


def _nic(get: _Reader, platform) -> NicActivity:
    stats = get.stats
    nic = NicActivity()
    for n in nic_indices(platform):
        ports = paths.NIC_PORT.instances(stats, "rx_bytes", nic=n) or [(n, 0)]
        for key, leaf in NIC_PORT_COUNTERS.items():
            setattr(nic, key, getattr(nic, key) + sum(get(paths.NIC_PORT.stat(n, p, leaf)) for _, p in ports))
        if paths.ON_DIE.stat(n, "up_bytes") not in stats:
            # A NIC on PCIe; an integrated MAC (Nic.attach = 'on_die') has no PCIe link to price.
            nic.pcie_tlps += get(paths.PCIE.stat(n, "tlps"))
            nic.pcie_bytes += get(paths.PCIE.stat(n, "up_bytes")) + get(paths.PCIE.stat(n, "down_bytes"))
        get.check(f"NIC {n}")
    return nic


def nic_indices(platform) -> list[int]:
    """The system-wide numbers of a socket's NICs (their stats are ``system.nic{n}``)."""
    if getattr(platform, "nic_indices", None) is not None:
        return list(platform.nic_indices)
    return list(range(platform.nic.count))


def derive_fp(stats: dict, prefix: str) -> dict[str, float]:
    """The FP counters of one core (``prefix`` = ``system.socket0.core3.``) derived from its FP class counters (see
    the module docstring); empty when the core does not report them (the counters are then read as they are)."""
    if not all(prefix + c in stats for c in FP_CLASSES):
        return {}
    n = {c: float(stats[prefix + c]) for c in FP_CLASSES}
    ops = sum(n.values())
    sources = sum(FP_SOURCES[c] * n[c] for c in FP_CLASSES)
    return {"fp_ops": ops, "fp_iq_reads": ops, "fp_iq_writes": ops, "fp_iq_wakeups": ops, "fp_rename_reads": sources,
            "fp_rename_writes": ops, "fp_rf_reads": sources, "fp_rf_writes": ops}


def stats_names(platform, *, socket: int = 0) -> list[str]:
    """Every stats name ``from_stats`` reads for this platform (for documentation, for the timing models and for
    synthetic test stats); a stacked memory's and a NIC's ports are listed as port 0."""
    names = [paths.RUN.stat("sim_seconds")]
    caches = dict(PRIVATE_CACHE_COUNTERS, **({"l2": L2_COUNTERS} if platform.core.l2 is not None else {}))
    for i in range(platform.cores):
        names += [paths.CORE.stat(socket, i, n) for n in CORE_COUNTERS]
        names += [paths.PRIVATE_CACHE.stat(socket, i, c, k) for c, counters in caches.items() for k in counters]
    for _ in platform.caches:
        names += [paths.LLC.stat(socket, k) for k in CACHE_COUNTERS]
    for _ in platform.directories:
        names += [paths.DIRECTORY.stat(socket, k) for k in DIRECTORY_REQUESTS + ("back_invalidations",)]
    for _ in platform.nocs:
        names += [paths.NOC.stat(socket, k) for k in NOC_COUNTERS]
    if getattr(platform, "memory", "ddr") in ("dram3d", "flash"):
        group = paths.STACK_PORT if platform.memory == "dram3d" else paths.FLASH_CONTROLLER
        names += [group.stat(socket, 0, k) for k in ("reads", "writes")]
    else:
        channels = platform.dram.channels if platform.dram is not None else \
            platform.mc.count * platform.mc.channels_per_mc
        names += [paths.CHANNEL.stat(socket, k, f_) for k in range(channels) for f_ in DDR_COUNTERS]
    for n in nic_indices(platform):
        names += [paths.NIC_PORT.stat(n, 0, leaf) for leaf in NIC_PORT_COUNTERS.values()]
        names += [paths.PCIE.stat(n, k) for k in PCIE_COUNTERS]
    names.append(paths.CLIENT.stat("requests"))
    return names
