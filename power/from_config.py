"""The platform the power model prices, built from a run's resolved configuration (``config.json``, i.e.
``models.System.to_dict()``): there is no second description of the sockets.

What comes from the timing configuration: harts (cores) and their clock, the core (widths, ROB, LQ/SQ, ALUs,
multipliers, branch predictor, BTB), the caches (L1I, L1D, optional private L2, the LLC and its slices, the uncore
clock), memory (channels, DRAM timings and clock), the NIC(s) (ports, port speed, PCIe generation and lanes).
What comes from ``System.technology`` (``models/technology.py``): node, device type, temperature, supply, the
core details the timing model abstracts, the on-chip network, DRAM device currents, NIC chip internals, TDP.

The reader is defensive about the shape of the configuration: a config with a list ``sockets`` gives one platform
per socket (each socket's sections override the top-level ones), and a list ``nics`` counts one NIC per entry.
A missing section is a clear ``ConfigError`` naming it, never a silent default.
"""

from __future__ import annotations

import math

from . import die
from .activity import DIRECTORY
from .config import (
    CacheConfig,
    CoreConfig,
    DirectoryConfig,
    DramConfig,
    DramDevice,
    MemCtrlConfig,
    NicConfig,
    NocConfig,
    PcieConfig,
    Platform,
)


class ConfigError(ValueError):
    """The run's configuration lacks what the power model needs."""


def _need(d: dict, key: str, where: str):
    if not isinstance(d, dict) or key not in d:
        raise ConfigError(f"config.json: {where}.{key} is missing (the power model prices the run's own "
                          f"configuration; re-run with a current models.System)")
    return d[key]


def _mhz(hz) -> float:
    return float(hz) / 1e6


def _cache(name: str, c: dict, *, banks: int = 1, count: int = 1, level: int = 2, sequential: bool = False,
           clock_MHz: float | None = None) -> CacheConfig:
    mshrs = int(c.get("mshrs", 8))
    return CacheConfig(name, capacity_B=int(_need(c, "size", name)), block_B=int(c.get("line_size", 64)),
                       assoc=int(_need(c, "assoc", name)), banks=banks, latency_cycles=float(c.get("hit_latency", 3)),
                       buffers=(mshrs, mshrs, mshrs, mshrs), count=count, level=level, sequential=sequential,
                       clock_MHz=clock_MHz)


def _socket_views(config: dict) -> list[dict]:
    """One dict per socket in the flat form (``harts``, ``cores`` = the per-core list, ``core``, ``caches``, ...):
    the socket's own sections over the top-level ones. A ``models.Socket`` entry counts its cores in ``cores`` and
    lists per-core models in ``core_models``; both are mapped to the flat names here."""
    sockets = config.get("sockets")
    if not sockets:
        return [config]
    if not isinstance(sockets, list):
        raise ConfigError("config.json: sockets must be a list")
    views = []
    for s in sockets:
        s = dict(s)
        if isinstance(s.get("cores"), int):          # models.Socket: cores is the count, core_models the list
            s["harts"] = s.pop("cores")
            s["cores"] = s.pop("core_models", [])
        views.append({**config, **s})
    return views


def _nics(view: dict, socket: int = 0) -> list[tuple[int, dict]]:
    """The enabled NICs attached to ``socket`` (``Nic.socket``; the one-NIC shorthand ``nic`` is socket 0's), each
    with its system-wide number (the engine numbers the enabled NICs in list order: stats ``system.nic{n}``)."""
    nics = view.get("nics")
    if isinstance(nics, list) and nics:
        enabled = [n for n in nics if n.get("enabled", True)]
        return [(i, n) for i, n in enumerate(enabled) if int(n.get("socket", 0)) == socket]
    nic = view.get("nic")
    return [(0, nic)] if socket == 0 and isinstance(nic, dict) and nic.get("enabled", False) else []


def _nocs(v: dict, tech: dict, slices: int) -> list[NocConfig]:
    """The socket's on-chip network, as the timing model simulates it (the socket tree's `noc` section)."""
    if slices <= 1:
        return []
    noc = _need(v, "noc", "System")
    clusters = max(1, int(v.get("harts", 1)) // max(1, int(v.get("cores_per_cluster", 1))))
    kind = _need(noc, "topology", "System.noc")
    x, y = int(noc.get("mesh_x", 0)), int(noc.get("mesh_y", 0))
    if kind == "ring":      # the same automatic dimensions as models.noc.Noc.dimensions
        x, y = x or clusters, y or 1
    else:
        if not x and not y:
            x = math.ceil(math.sqrt(clusters))
        x = x or math.ceil(clusters / y)
        y = y or math.ceil(clusters / x)
    ports = int(tech["noc_ports"]) or (3 if kind == "ring" else 5)
    ring = {"vcs": 1} if kind == "ring" else {}
    return [NocConfig("ring" if kind == "ring" else "noc", kind=kind, nodes_x=x, nodes_y=y, in_ports=ports,
                      out_ports=ports, flit_bits=int(noc.get("link_bytes", 32)) * 8, **ring)]


def platforms_from_config(config: dict) -> list[Platform]:
    """Every socket of a run's resolved configuration as a ``Platform``."""
    if not isinstance(config, dict):
        raise ConfigError(f"config.json must hold an object, not {type(config).__name__}")
    return [_platform(v, i) for i, v in enumerate(_socket_views(config))]


def platform_from_config(config: dict) -> Platform:
    """The one socket of a run's configuration (a ``ConfigError`` if it has several: use
    ``platforms_from_config``)."""
    ps = platforms_from_config(config)
    if len(ps) != 1:
        raise ConfigError(f"config.json describes {len(ps)} sockets: price them with platforms_from_config")
    return ps[0]


def _platform(v: dict, index: int) -> Platform:
    tech = _need(v, "technology", "System")
    core_cfg = _need(v, "core", "System")
    caches = _need(v, "caches", "System")
    mem = _need(v, "memory", "System")
    harts = int(_need(v, "harts", "System"))
    cores_list = v.get("cores") or []
    if cores_list:
        core_cfg = cores_list[0]   # heterogeneous cores are priced as the first one (one core type per socket)
    clock = _mhz(core_cfg.get("clock") or _need(v, "clock", "System"))
    # each core's own clock (per-core DVFS): the list's entries, or the one core model's clock for every core
    clocks = tuple(_mhz(c.get("clock") or clock * 1e6) for c in cores_list) if cores_list else None
    if clocks is not None and len(clocks) != harts:
        raise ConfigError(f"config.json: {len(clocks)} per-core models for {harts} cores (one per core, or none)")
    if clocks is not None and len(set(clocks)) == 1:
        clocks = None
    rob = int(_need(core_cfg, "rob_entries", "System.core"))
    ooo = core_cfg.get("model", "ooo") == "ooo"
    width = int(_need(core_cfg, "issue_width", "System.core"))
    alus = int(core_cfg.get("int_alus", width))
    btb_entries = int(core_cfg.get("btb_entries", 2048))
    bp_entries = int(core_cfg.get("bpred_entries", 4096))
    # The priced part's own datapath and address widths and FPU (Technology; a config.json written before they were
    # declared has none of them and gets their defaults, the values every core was priced at until then).
    datapath_bits = int(tech.get("datapath_bits", 64))
    vaddr_bits = int(tech.get("virtual_address_bits", 48))
    fpu = bool(tech.get("fpu", True))
    fp_units = int(core_cfg.get("fp_units", 1)) if fpu else 0
    core = CoreConfig(
        ooo=ooo, threads=1,
        fetch_width=int(core_cfg.get("fetch_width", width)), decode_width=int(core_cfg.get("fetch_width", width)),
        issue_width=width, peak_issue_width=width + int(core_cfg.get("load_ports", 1)) - 1 if ooo else width,
        commit_width=int(core_cfg.get("commit_width", width)),
        fp_issue_width=max(1, fp_units) if fpu else 0,
        pipeline_depth=int(tech["pipeline_depth"]), alus=alus,
        muls=int(core_cfg.get("mul_units", 1)), fpus=fp_units,
        iq=int(tech["issue_queue"]) or max(4, rob // 2), fp_iq=max(4, rob // 4) if fpu else 0, rob=rob,
        arch_int_regs=32, arch_fp_regs=32 if fpu else 0,
        phys_int_regs=int(tech["phys_int_regs"]) or 32 + rob,
        phys_fp_regs=(int(tech["phys_fp_regs"]) or 32 + rob // 2) if fpu else 0,
        lq=int(core_cfg.get("lq_entries", 32)), sq=int(core_cfg.get("sq_entries", 32)),
        mem_ports=int(core_cfg.get("load_ports", 1)) + int(core_cfg.get("store_ports", 1)) - 1,
        ras=int(core_cfg.get("ras_entries", 16)), x86=bool(tech["x86"]),
        machine_bits=datapath_bits, vaddr_bits=vaddr_bits, paddr_bits=46, inst_bits=32,
        opcode_bits=16 if tech["x86"] else 7, uop_opcode_bits=8,
        btb=CacheConfig("btb", btb_entries * 8, 8, 4, buffers=(0, 0, 0, 0)),
        global_pred_entries=bp_entries, chooser_entries=bp_entries,
        itlb_entries=int(tech["tlb_entries"]), dtlb_entries=int(tech["tlb_entries"]),
        icache=_cache("icache", _need(caches, "l1i", "System.caches")),
        dcache=_cache("dcache", _need(caches, "l1d", "System.caches")),
        # tag then data, as McPAT prices every lower-level cache (the timing model's hit latency is a config value)
        l2=_cache("l2", caches["l2"], sequential=True) if caches.get("l2_enabled") else None,
    )
    uncore = _mhz(caches.get("uncore_clock") or clock * 1e6)
    slices = max(1, int(caches.get("llc_slices", 1)))
    llc_cfg = _need(caches, "llc", "System.caches")
    llc = _cache("llc", dict(llc_cfg, size=int(llc_cfg["size"]) // slices), banks=int(tech["llc_banks"]),
                 count=slices, level=3 if core.l2 is not None else 2, sequential=True)
    nocs = _nocs(v, tech, slices)
    directories = [_directory(v, llc_cfg, slices, harts)]
    channels = int(_need(mem, "channels", "System.memory"))
    t_ck_ps = float(_need(mem, "t_ck", "System.memory"))
    io_clock = 1e6 / t_ck_ps                       # MHz
    burst = int(mem.get("burst_length", 8))
    cur = _device_currents(tech)
    device = DramDevice(name=str(tech["dram_device"]), tck_ns=t_ck_ps / 1e3,
                        tras_ns=mem["t_ras"] * t_ck_ps / 1e3, trc_ns=(mem["t_ras"] + mem["t_rp"]) * t_ck_ps / 1e3,
                        trfc_ns=float(mem["t_rfc"]) / 1e3, trefi_ns=float(mem["t_refi"]) / 1e3, burst=burst, **cur)
    ranks = int(tech["dram_ranks_per_channel"])
    per_rank = int(tech["dram_devices_per_rank"])
    if per_rank * device.width_bits < 64:
        raise ConfigError(f"config.json: technology.dram_devices_per_rank = {per_rank} x{device.width_bits} devices "
                          f"({tech['dram_device']}): a rank needs at least {64 // device.width_bits} of them for "
                          "its 64-bit data bus")
    numbered = _nics(v, index)
    nics = [n for _, n in numbered]
    nic = NicConfig(count=len(nics), ports=max([int(n.get("ports", 1)) for n in nics] or [1]),
                    port_gbps=max([float(n.get("port_gbps", 10.0)) for n in nics] or [10.0]),
                    buffer_KB=int(tech["nic_buffer"]) // 1024, queues=int(tech["nic_queues"]),
                    clock_MHz=_mhz(tech["nic_clock"]),
                    on_die=bool(nics) and all(n.get("attach") == "on_die" for n in nics))
    # An integrated MAC (Nic.attach = 'on_die') has no PCIe link to price.
    pcie = PcieConfig(count=sum(n.get("attach", "pcie") != "on_die" for n in nics),
                      lanes=max([int(n.get("pcie_lanes", 8)) for n in nics] or [8]),
                      gen=max([int(n.get("pcie_gen", 2)) for n in nics] or [2]), with_phy=True,
                      clock_MHz=_mhz(tech["pcie_clock"]))
    name = str(tech["part"]) + (f" socket{index}" if index else "")
    return Platform(
        name=name, part=str(tech["part"]), node_nm=float(tech["node"]), device=str(tech["device"]), temperature_K=float(tech["temperature"]),
        long_channel=bool(tech["long_channel"]), clock_MHz=clock, vdd=float(tech["vdd"]) or None, cores=harts,
        core=core, caches=[llc], directories=directories, nocs=nocs, core_clocks_MHz=clocks,
        nic_indices=_indices([i for i, _ in numbered]),
        mc=MemCtrlConfig(count=channels, channels_per_mc=1, io_clock_MHz=io_clock,
                         peak_MBps=2 * io_clock * 8, databus_bits=64, addrbus_bits=32, ranks=ranks, with_phy=True),
        dram=DramConfig(device, channels=channels, ranks_per_channel=ranks,
                        devices_per_rank=per_rank),
        memory=str(mem.get("kind", "ddr")),
        nic=nic, pcie=pcie, uncore_clock_MHz=uncore if uncore != clock else None,
        tdp_W=float(tech["tdp"]) or None, die=die.published(str(tech["part"])))


def _indices(numbers: list[int]) -> tuple[int, ...] | None:
    """System-wide NIC numbers, or None when they are the default 0 .. count - 1."""
    return None if numbers == list(range(len(numbers))) else tuple(numbers)


def _directory(v: dict, llc_cfg: dict, slices: int, harts: int) -> DirectoryConfig:
    """The coherence directory the timing model runs (models/timing/src/mem/directory.rs): two levels, the cluster
    level at the cluster's LLC slice and the home slice by line interleave, sharers exact. Its state lives beside
    the inclusive LLC's lines (assumed, as the target's config says: the LLC holds the sharer vectors), so it is
    priced as one directory cache per slice with an entry per LLC line: a sharer bit per cluster (home level), a
    bit per core of the cluster (cluster level) and 3 bits of MOESI state. Its activity is the directory's
    counters (``system.socket{k}.directory.*``, see power.activity)."""
    per_cluster = max(1, int(v.get("cores_per_cluster", 1)))
    clusters = max(1, harts // per_cluster)
    entry_B = max(1, math.ceil((clusters + per_cluster + 3) / 8))
    lines = max(1, int(llc_cfg["size"]) // slices // int(llc_cfg.get("line_size", 64)))
    return DirectoryConfig(DIRECTORY, kind="cache", capacity_B=lines * entry_B, block_B=entry_B,
                           assoc=int(llc_cfg.get("assoc", 8)), count=slices, level=2,
                           latency_cycles=float(_need(v, "caches", "System").get("directory", {}).get("latency", 1)))


def _device_currents(tech: dict) -> dict:
    from models.technology import DRAM_DEVICES
    name = tech["dram_device"]
    if name not in DRAM_DEVICES:
        raise ConfigError(f"config.json: technology.dram_device = {name!r}: allowed {', '.join(DRAM_DEVICES)}")
    return dict(DRAM_DEVICES[name])
