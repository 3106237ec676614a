"""Activity inputs of the power model: event counts per structure over a measured interval.

The schema is a tree of dataclasses (``Activity``) whose fields are plain counts. ``from_stats`` builds it from a
kvsim stats dict (flat names as in ``stats.json``), as a detailed run writes it. The names it reads are (``S`` = ``system.socket0``, ``i`` core index, ``j`` slice, ``k`` channel,
``n`` NIC):

Run-level
    ``sim_seconds``                      simulated time of the interval (required)
    ``client.requests``                  requests answered in the interval (for energy per request; optional)

Per core (``S.core{i}.``)
    ``cycles``, ``committed_insts``, ``int_ops``, ``fp_ops``, ``mul_ops`` (mul + div), ``loads``, ``stores``,
    ``branches``, ``branch_mispredicts``, ``rob_reads``, ``rob_writes``, ``rename_reads``, ``rename_writes``,
    ``fp_rename_reads``, ``fp_rename_writes``, ``iq_reads``, ``iq_writes``, ``iq_wakeups``, ``fp_iq_reads``,
    ``fp_iq_writes``, ``fp_iq_wakeups``, ``int_rf_reads``, ``int_rf_writes``, ``fp_rf_reads``, ``fp_rf_writes``,
    ``btb_reads``, ``btb_writes``, ``itlb.accesses``, ``itlb.misses``, ``dtlb.accesses``, ``dtlb.misses``,
    ``l1i.reads``, ``l1i.misses``, ``l1d.reads``, ``l1d.writes``, ``l1d.read_misses``, ``l1d.write_misses``,
    and for a private L2 ``l2.reads``, ``l2.writes``, ``l2.read_misses``, ``l2.write_misses``

Shared caches (``S.{cache}.`` with ``cache`` the cache's name in the platform, e.g. ``llc``), summed over slices
    ``reads``, ``writes``, ``read_misses``, ``write_misses``; ``writebacks`` (optional)

Directories (``S.{dir}.``): ``reads``, ``writes``; the coherence directory the engine runs (``S.directory.``) is read
    from its own counters instead: ``gets``, ``getx``, ``upgrades``, ``puts``, ``putx`` (every request reads its
    entry: reads = their sum; each also changes the entry, as does a ``back_invalidations``: writes = the sum plus
    back-invalidations)

FP (per core, ``S.core{i}.``): when the core reports its FP classes (``fp_add_ops``, ``fp_mul_ops``, ``fp_fma_ops``,
    ``fp_cvt_ops``, ``fp_div_ops``) the FP counters are derived from them (``derive_fp``), not read: ``fp_ops`` is
    their sum; every FP instruction passes the FP issue queue once (reads, writes) and writes one result (FP rename
    write, register-file write, wakeup); its source operands (FP rename and register-file reads) are 2 for add,
    multiply and divide, 3 for FMA and 1 for a conversion (the RISC-V formats; a square root, counted with the
    divides, has 1: an upper bound by one operand each)

On-chip network (``S.{noc}.``): ``flits`` (flits injected), ``hops`` (flit-hops: router traversals)

Memory (``S.mem.channel{k}.``): ``reads``, ``writes`` (bursts), ``activates``, ``precharges``, ``refreshes``

NICs (``system.nic{n}.port{p}.``, summed over the ports): ``rx_bytes``, ``tx_bytes``, ``rx_frames``, ``tx_frames``;
PCIe (``system.nic{n}.pcie.``): ``tlps``, ``up_bytes``, ``down_bytes``

Aliases: ``insts`` is accepted for ``committed_insts`` and ``mispredicts`` for ``branch_mispredicts`` (the names
the first core timing model uses).

Missing counters: with ``strict=True`` ``from_stats`` raises ``KeyError`` naming every missing one; with
``strict=False`` they count as zero and are listed in ``Activity.missing`` (the result's ``warnings`` carry them
into the DataFrame and the stats), never silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields

CORE_COUNTERS = (
    "cycles", "committed_insts", "int_ops", "fp_ops", "mul_ops", "loads", "stores", "branches",
    "branch_mispredicts", "rob_reads", "rob_writes", "rename_reads", "rename_writes", "fp_rename_reads",
    "fp_rename_writes", "iq_reads", "iq_writes", "iq_wakeups", "fp_iq_reads", "fp_iq_writes", "fp_iq_wakeups",
    "int_rf_reads", "int_rf_writes", "fp_rf_reads", "fp_rf_writes", "btb_reads", "btb_writes",
    "itlb.accesses", "itlb.misses", "dtlb.accesses", "dtlb.misses", "l1i.reads", "l1i.misses", "l1d.reads",
    "l1d.writes", "l1d.read_misses", "l1d.write_misses",
)
L2_COUNTERS = ("l2.reads", "l2.writes", "l2.read_misses", "l2.write_misses")
FP_CLASSES = ("fp_add_ops", "fp_mul_ops", "fp_fma_ops", "fp_cvt_ops", "fp_div_ops")
# Source operands per FP class (RISC-V formats: add/sub/min/max/compare/sign-injection 2, mul 2, FMA 3, conversions
# and moves 1, divide 2; square root, which shares the divide class, has 1).
FP_SOURCES = {"fp_add_ops": 2, "fp_mul_ops": 2, "fp_fma_ops": 3, "fp_cvt_ops": 1, "fp_div_ops": 2}
# The engine's coherence directory counters (models/timing/src/mem/report.rs), and the directory's name.
DIRECTORY = "directory"
DIRECTORY_REQUESTS = ("gets", "getx", "upgrades", "puts", "putx")
# Other names a counter may carry (the first timing models in models/timing name some counters differently).
ALIASES = {"committed_insts": ("insts",), "branch_mispredicts": ("mispredicts",)}


def _attr(name: str) -> str:
    return name.replace(".", "_")


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


def from_stats(stats: dict, platform, *, socket: int = 0, strict: bool = False) -> Activity:
    """Build the activity of one socket from a flat kvsim stats dict (see the module docstring for names)."""
    missing: list[str] = []
    s = f"system.socket{socket}"

    def get(key: str) -> float:
        if key in stats:
            return float(stats[key])
        head, _, leaf = key.rpartition(".")
        for alt in ALIASES.get(leaf, ()):
            if f"{head}.{alt}" in stats:
                return float(stats[f"{head}.{alt}"])
        missing.append(key)
        return 0.0

    seconds = get("sim_seconds")
    cores = []
    for i in range(platform.cores):
        kw = {}
        names = CORE_COUNTERS + (L2_COUNTERS if platform.core.l2 is not None else ())
        fp = derive_fp(stats, f"{s}.core{i}.")
        for n in names:
            kw[_attr(n)] = fp[n] if n in fp else get(f"{s}.core{i}.{n}")
        cores.append(CoreActivity(**kw))
    caches = {}
    for c in platform.caches:
        caches[c.name] = CacheActivity(reads=get(f"{s}.{c.name}.reads"), writes=get(f"{s}.{c.name}.writes"),
                                       read_misses=get(f"{s}.{c.name}.read_misses"),
                                       write_misses=get(f"{s}.{c.name}.write_misses"),
                                       writebacks=float(stats.get(f"{s}.{c.name}.writebacks", 0.0)))
    dirs = {}
    for d in platform.directories:
        if d.name == DIRECTORY:     # the engine's coherence directory: its own counters
            req = sum(get(f"{s}.{DIRECTORY}.{k}") for k in DIRECTORY_REQUESTS)
            dirs[d.name] = CacheActivity(reads=req, writes=req + get(f"{s}.{DIRECTORY}.back_invalidations"))
        else:
            dirs[d.name] = CacheActivity(reads=get(f"{s}.{d.name}.reads"), writes=get(f"{s}.{d.name}.writes"))
    nocs = {n.name: NocActivity(flits=get(f"{s}.{n.name}.flits"), hops=get(f"{s}.{n.name}.hops"))
            for n in platform.nocs}
    dram = DramActivity()
    channels = platform.dram.channels if platform.dram is not None else platform.mc.count * platform.mc.channels_per_mc
    for k in range(channels):
        for f_ in fields(DramActivity):
            setattr(dram, f_.name, getattr(dram, f_.name) + get(f"{s}.mem.channel{k}.{f_.name}"))
    nic = NicActivity()
    for n in nic_indices(platform):
        # The engine counts per port (system.nicN.portP.rx_bytes ...); a NIC's activity is the sum of its ports.
        for key, leaf in (("rx_bytes", "rx_bytes"), ("tx_bytes", "tx_bytes"), ("rx_packets", "rx_frames"),
                          ("tx_packets", "tx_frames")):
            port_keys = [k for k in stats if re.fullmatch(rf"system\.nic{n}\.port\d+\.{leaf}", k)]
            if port_keys:
                setattr(nic, key, getattr(nic, key) + sum(float(stats[k]) for k in port_keys))
            else:
                missing.append(f"system.nic{n}.port*.{leaf}")
        if f"system.nic{n}.on_die.up_bytes" in stats:
            continue                # an integrated MAC (Nic.attach = 'on_die'): no PCIe link, no PCIe counters
        nic.pcie_tlps += get(f"system.nic{n}.pcie.tlps")
        nic.pcie_bytes += get(f"system.nic{n}.pcie.up_bytes") + get(f"system.nic{n}.pcie.down_bytes")
    requests = float(stats.get("client.requests", 0.0))
    if "client.requests" not in stats:
        missing.append("client.requests")
    if strict and missing:
        raise KeyError(f"power.activity.from_stats: {len(missing)} counters missing from the stats: "
                       + ", ".join(missing[:20]) + (" ..." if len(missing) > 20 else ""))
    act = Activity(seconds=seconds, cores=cores, caches=caches, directories=dirs, nocs=nocs, dram=dram, nic=nic,
                   requests=requests, missing=missing)
    if seconds <= 0:
        raise ValueError("power.activity.from_stats: sim_seconds is missing or not > 0; cannot turn counts into "
                         "power")
    return act


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
    """Every stats name ``from_stats`` reads for this platform (for documentation and for the timing models)."""
    names = []
    s = f"system.socket{socket}"
    names.append("sim_seconds")
    for i in range(platform.cores):
        for n in CORE_COUNTERS + (L2_COUNTERS if platform.core.l2 is not None else ()):
            names.append(f"{s}.core{i}.{n}")
    for c in platform.caches:
        names += [f"{s}.{c.name}.{k}" for k in ("reads", "writes", "read_misses", "write_misses")]
    for d in platform.directories:
        keys = DIRECTORY_REQUESTS + ("back_invalidations",) if d.name == DIRECTORY else ("reads", "writes")
        names += [f"{s}.{d.name}.{k}" for k in keys]
    for n in platform.nocs:
        names += [f"{s}.{n.name}.{k}" for k in ("flits", "hops")]
    channels = platform.dram.channels if platform.dram is not None else platform.mc.count * platform.mc.channels_per_mc
    for k in range(channels):
        names += [f"{s}.mem.channel{k}.{f_.name}" for f_ in fields(DramActivity)]
    for n in nic_indices(platform):
        names += [f"system.nic{n}.{k}" for k in ("port0.rx_bytes", "port0.tx_bytes", "port0.rx_frames",
                                                 "port0.tx_frames", "pcie.tlps", "pcie.up_bytes", "pcie.down_bytes")]
    names.append("client.requests")
    return names
