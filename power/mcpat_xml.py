"""McPAT XML interoperability: read McPAT's input format into a ``Platform`` + ``Activity``, and write one.

McPAT's input is a tree of ``<component id=... name=...>`` elements holding ``<param name= value=/>`` and
``<stat name= value=/>`` leaves. Values are numbers, comma-separated lists of numbers (cache configurations such as
``"32768,32,8,1, 4,6, 32,1 "``, with stray spaces), or words (``LSU_order``). The reader takes what McPAT's own
example processors contain; unknown parameters are ignored, as McPAT does.

The writer produces every component McPAT expects (system, core(s) with predictor, TLBs, caches and BTB,
directories, L2, L3, NoC, memory controller, NIU, PCIe, flash controller), so users with McPAT can run the file.
Values McPAT has no parameter for (kvsim's DRAM device currents, NIC port speed, names) are written as extra
``kvsim_*`` params, which McPAT skips and this reader uses, so a written file re-reads to the same model.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import fields
from pathlib import Path

from .activity import Activity, CacheActivity, CoreActivity, DramActivity, NocActivity
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
from .mcpat_rules import legalize

DEVICE_CODES = {0: "hp", 1: "lstp", 2: "lop"}
DEVICE_NAMES = {v: k for k, v in DEVICE_CODES.items()}


class McpatXmlError(ValueError):
    pass


def _parse_value(v: str):
    v = v.strip()
    if "," in v:
        parts = [x.strip() for x in v.split(",") if x.strip() != ""]
        try:
            return [float(x) for x in parts]
        except ValueError:
            return parts
    try:
        return float(v)
    except ValueError:
        return v


class _Comp:
    def __init__(self, el: ET.Element):
        self.id = el.get("id", "")
        self.name = el.get("name", "")
        self.params = {p.get("name"): _parse_value(p.get("value", "")) for p in el.findall("param")}
        self.stats = {p.get("name"): _parse_value(p.get("value", "")) for p in el.findall("stat")}
        self.children = {c.get("id", ""): _Comp(c) for c in el.findall("component")}

    def p(self, key, default=None):
        return self.params.get(key, default)

    def clock(self):
        """The component's own clock, or None when kvsim wrote it as following its domain."""
        if _int(self.params.get("kvsim_clock_follows_domain"), 0) == 1:
            return None
        return _num(self.params.get("clockrate"), None)

    def s(self, key, default=0.0):
        v = self.stats.get(key, default)
        return v[0] if isinstance(v, list) else v


def _num(v, default):
    if v is None:
        return default
    if isinstance(v, list):
        return v[0]
    if isinstance(v, str):
        raise McpatXmlError(f"expected a number, found {v!r}")
    return v


def _own_device(k, key: str, chip: str) -> str | None:
    """A shared cache's or directory's own device type (McPAT prices it with its ``device_type``, not the chip's:
    its Cortex-A9's L2 is high-performance on a low-power chip); None when it is the chip's, or when the input
    gives none (kvsim's reading: McPAT's parser would take LSTP, as it does for an absent chip device type)."""
    code = k.p("device_type")
    if code is None:
        return None
    device = DEVICE_CODES.get(_int(code, 0))
    if device is None:
        raise McpatXmlError(f"{key}.device_type={code!r}: allowed 0 (HP), 1 (LSTP), 2 (LOP)")
    return None if device == chip else device


def _int(v, default):
    return int(round(_num(v, default)))


def _cache_cfg(name: str, vals, clock=None, **kw) -> CacheConfig:
    if not isinstance(vals, list) or len(vals) < 3:
        raise McpatXmlError(f"{name}: cache configuration {vals!r} needs at least capacity,block,associativity")
    v = list(vals) + [None] * 8
    return CacheConfig(name=name, capacity_B=int(v[0]), block_B=int(v[1]), assoc=int(v[2]),
                       banks=int(v[3] or 1), throughput_cycles=float(v[4] or 1), latency_cycles=float(v[5] or 1),
                       output_bits=int(v[6] or 0), write_back=bool(v[7]) if v[7] is not None else True,
                       clock_MHz=clock, **kw)


# (McPAT param, CoreConfig attribute, kind): kind 'i' int, 'f' float, 'b' bool, 'nb' negated bool, 'pair' first
# of a pair.
CORE_PARAMS = [
    ("machine_type", "ooo", "nb"), ("number_hardware_threads", "threads", "i"), ("fetch_width", "fetch_width", "i"),
    ("decode_width", "decode_width", "i"), ("issue_width", "issue_width", "i"),
    ("peak_issue_width", "peak_issue_width", "i"), ("commit_width", "commit_width", "i"),
    ("fp_issue_width", "fp_issue_width", "i"), ("pipeline_depth", "pipeline_depth", "pair"),
    ("ALU_per_core", "alus", "f"), ("MUL_per_core", "muls", "f"), ("FPU_per_core", "fpus", "f"),
    ("instruction_buffer_size", "inst_buffer", "i"), ("decoded_stream_buffer_size", "decoded_buffer", "i"),
    ("instruction_window_scheme", "rs_window", "b"), ("instruction_window_size", "iq", "i"),
    ("fp_instruction_window_size", "fp_iq", "i"), ("ROB_size", "rob", "i"),
    ("archi_Regs_IRF_size", "arch_int_regs", "i"), ("archi_Regs_FRF_size", "arch_fp_regs", "i"),
    ("phy_Regs_IRF_size", "phys_int_regs", "i"), ("phy_Regs_FRF_size", "phys_fp_regs", "i"),
    ("rename_scheme", "rename_cam", "b"), ("checkpoint_depth", "checkpoints", "i"),
    ("register_windows_size", "reg_windows", "i"), ("store_buffer_size", "sq", "i"),
    ("load_buffer_size", "lq", "i"), ("memory_ports", "mem_ports", "i"), ("RAS_size", "ras", "i"),
    ("x86", "x86", "b"), ("instruction_length", "inst_bits", "i"), ("opcode_width", "opcode_bits", "i"),
    ("micro_opcode_width", "uop_opcode_bits", "i"),
]

# McPAT core stat -> CoreActivity field
CORE_STATS = [
    ("total_cycles", "cycles"), ("committed_instructions", "committed_insts"), ("ialu_accesses", "int_ops"),
    ("fpu_accesses", "fp_ops"), ("mul_accesses", "mul_ops"), ("load_instructions", "loads"),
    ("store_instructions", "stores"), ("branch_instructions", "branches"),
    ("branch_mispredictions", "branch_mispredicts"), ("ROB_reads", "rob_reads"), ("ROB_writes", "rob_writes"),
    ("rename_reads", "rename_reads"), ("rename_writes", "rename_writes"), ("fp_rename_reads", "fp_rename_reads"),
    ("fp_rename_writes", "fp_rename_writes"), ("inst_window_reads", "iq_reads"),
    ("inst_window_writes", "iq_writes"), ("inst_window_wakeup_accesses", "iq_wakeups"),
    ("fp_inst_window_reads", "fp_iq_reads"), ("fp_inst_window_writes", "fp_iq_writes"),
    ("fp_inst_window_wakeup_accesses", "fp_iq_wakeups"), ("int_regfile_reads", "int_rf_reads"),
    ("int_regfile_writes", "int_rf_writes"), ("float_regfile_reads", "fp_rf_reads"),
    ("float_regfile_writes", "fp_rf_writes"),
]
DUTY_NAMES = ("IFU", "LSU", "MemManU_I", "MemManU_D", "ALU", "MUL", "FPU", "ALU_cdb", "MUL_cdb", "FPU_cdb")


def _read_core(sysc: _Comp, cc: _Comp) -> tuple[CoreConfig, CoreActivity, float, float | None]:
    core = CoreConfig()
    for mp, attr, kind in CORE_PARAMS:
        v = cc.p(mp)
        if v is None:
            continue
        if kind == "i":
            setattr(core, attr, _int(v, getattr(core, attr)))
        elif kind == "f":
            setattr(core, attr, float(_num(v, getattr(core, attr))))
        elif kind == "b":
            setattr(core, attr, bool(_int(v, 0)))
        elif kind == "nb":
            setattr(core, attr, not bool(_int(v, 0)))
        elif kind == "pair":
            setattr(core, attr, _int(v, getattr(core, attr)))
    core.machine_bits = _int(sysc.p("machine_bits"), core.machine_bits)
    core.embedded = bool(_int(sysc.p("Embedded"), 0))
    core.opt_clockrate = bool(_int(sysc.p("opt_clockrate"), 1))
    core.vaddr_bits = _int(sysc.p("virtual_address_width"), core.vaddr_bits)
    core.paddr_bits = _int(sysc.p("physical_address_width"), core.paddr_bits)
    duty = dict(core.duty)
    for k in DUTY_NAMES:
        if f"{k}_duty_cycle" in cc.stats:
            duty[k] = float(cc.s(f"{k}_duty_cycle"))
    core.duty = duty
    kids = {k.split(".")[-1]: v for k, v in cc.children.items()}
    pred = kids.get("predictor")
    if pred is not None:
        lps = pred.p("local_predictor_size")
        if isinstance(lps, list):
            core.local_hist_bits = int(lps[0])
            core.local_ctr_bits = int(lps[1]) if len(lps) > 1 else core.local_ctr_bits
        core.local_pred_entries = _int(pred.p("local_predictor_entries"), core.local_pred_entries)
        core.global_pred_entries = _int(pred.p("global_predictor_entries"), core.global_pred_entries)
        core.global_ctr_bits = _int(pred.p("global_predictor_bits"), core.global_ctr_bits)
        core.chooser_entries = _int(pred.p("chooser_predictor_entries"), core.chooser_entries)
        core.chooser_bits = _int(pred.p("chooser_predictor_bits"), core.chooser_bits)
    act = CoreActivity()
    for ms, attr in CORE_STATS:
        if ms in cc.stats:
            setattr(act, attr, float(cc.s(ms)))
    if "itlb" in kids:
        core.itlb_entries = _int(kids["itlb"].p("number_entries"), core.itlb_entries)
        act.itlb_accesses = float(kids["itlb"].s("total_accesses"))
        act.itlb_misses = float(kids["itlb"].s("total_misses"))
    if "dtlb" in kids:
        core.dtlb_entries = _int(kids["dtlb"].p("number_entries"), core.dtlb_entries)
        act.dtlb_accesses = float(kids["dtlb"].s("total_accesses"))
        act.dtlb_misses = float(kids["dtlb"].s("total_misses"))
    for key, attr, cname in (("icache", "icache", "icache_config"), ("dcache", "dcache", "dcache_config"),
                             ("BTB", "btb", "BTB_config")):
        if key in kids:
            k = kids[key]
            c = _cache_cfg(attr, k.p(cname))
            bs = k.p("buffer_sizes")
            if isinstance(bs, list):
                c.buffers = tuple(int(x) for x in (bs + [0, 0, 0, 0])[:4])
            elif key == "BTB":
                c.buffers = (0, 0, 0, 0)
            setattr(core, attr, c)
    if "icache" in kids:
        act.l1i_reads = float(kids["icache"].s("read_accesses"))
        act.l1i_misses = float(kids["icache"].s("read_misses"))
    if "dcache" in kids:
        k = kids["dcache"]
        act.l1d_reads, act.l1d_writes = float(k.s("read_accesses")), float(k.s("write_accesses"))
        act.l1d_read_misses, act.l1d_write_misses = float(k.s("read_misses")), float(k.s("write_misses"))
    if "BTB" in kids:
        act.btb_reads = float(kids["BTB"].s("read_accesses"))
        act.btb_writes = float(kids["BTB"].s("write_accesses"))
    clock = float(_num(cc.p("clock_rate"), _num(sysc.p("target_core_clockrate"), 2000.0)))
    vdd = _num(cc.p("vdd"), 0.0)
    return core, act, clock, (float(vdd) if vdd and vdd > 0 else None)


def per_core_share(total: CoreActivity, n_cores: int) -> CoreActivity:
    """One core's counts from chip totals of ``n_cores`` identical cores (cycles are elapsed time: not divided)."""
    out = CoreActivity(**{f.name: getattr(total, f.name) / n_cores for f in fields(CoreActivity)})
    out.cycles = total.cycles
    return out


def chip_total(acts: list[CoreActivity], n_cores: int) -> CoreActivity:
    """McPAT's homogeneous-core counts: the sum over all ``n_cores`` cores (one entry in ``acts`` stands for every
    core), cycles those of one core."""
    if len(acts) == 1:
        out = CoreActivity(**{f.name: getattr(acts[0], f.name) * n_cores for f in fields(CoreActivity)})
    else:
        out = CoreActivity(**{f.name: sum(getattr(a, f.name) for a in acts) for f in fields(CoreActivity)})
    out.cycles = acts[0].cycles
    return out


def _buffer_sizes(v, key: str) -> tuple[int, int, int, int]:
    """A directory's ``buffer_sizes`` (MSHR, fill, prefetch, write-back entries); McPAT's default 8 each when the
    input has none."""
    if v is None:
        return (8, 8, 8, 8)
    if not isinstance(v, list) or len(v) != 4:
        raise McpatXmlError(f"{key}.buffer_sizes={v!r} needs four entries (MSHR, fill, prefetch, write-back)")
    return tuple(int(x) for x in v)


def read(path_or_text: str | Path) -> tuple[Platform, Activity]:
    """Read a McPAT input XML (a path or the XML text) into a ``Platform`` and its ``Activity``."""
    text = str(path_or_text)
    if not text.lstrip().startswith("<"):
        p = Path(path_or_text)
        if not p.exists():
            raise FileNotFoundError(f"McPAT XML not found: {p}")
        text = p.read_text()
    try:
        root = _Comp(ET.fromstring(text))
    except ET.ParseError as e:
        raise McpatXmlError(f"not a McPAT XML: {e}") from e
    sysc = root.children.get("system")
    if sysc is None:
        raise McpatXmlError("no <component id=\"system\"> under the root")
    P = sysc.p
    n_cores = _int(P("number_of_cores"), 1)
    node = _num(P("core_tech_node"), None)
    if node is None:
        raise McpatXmlError("system.core_tech_node is missing")
    device = DEVICE_CODES.get(_int(P("device_type"), 0))
    if device is None:
        raise McpatXmlError(f"system.device_type={P('device_type')!r}: allowed 0 (HP), 1 (LSTP), 2 (LOP)")
    core_ids = sorted((k for k in sysc.children if k.startswith("system.core")), key=lambda k: int(k[11:]))
    if not core_ids and n_cores > 0:
        raise McpatXmlError("no system.core0 component")
    homogeneous = _int(P("homogeneous_cores"), 1) == 1
    core, act0, clock, vdd = _read_core(sysc, sysc.children[core_ids[0]])
    acts = [act0]
    if not homogeneous:
        acts = [_read_core(sysc, sysc.children[k])[1] for k in core_ids[:n_cores]]
    total_cycles = float(sysc.s("total_cycles", 0.0)) or act0.cycles
    for a in acts:
        if a.cycles == 0:
            a.cycles = total_cycles
    name = str(sysc.p("kvsim_name", root.name or "mcpat"))
    plat = Platform(name=name, part=str(sysc.p("kvsim_part", name)), node_nm=float(node), device=device,
                    temperature_K=float(_num(P("temperature"), 360.0)),
                    long_channel=bool(_int(P("longer_channel_device"), 0)),
                    clock_MHz=clock, vdd=vdd, cores=n_cores, core=core,
                    power_gating=bool(_int(P("power_gating"), 0)))
    if P("kvsim_uncore_clock") is not None:
        plat.uncore_clock_MHz = float(_num(P("kvsim_uncore_clock"), 0.0))
    if P("kvsim_tdp") is not None:
        plat.tdp_W = float(_num(P("kvsim_tdp"), 0.0))
    seconds = total_cycles / (clock * 1e6) if total_cycles > 0 else 1.0
    activity = Activity(seconds=seconds, cores=acts)
    if P("kvsim_seconds") is not None:
        activity.seconds = float(_num(P("kvsim_seconds"), seconds))
    activity.requests = float(sysc.s("kvsim_requests", 0.0))

    kids = sysc.children
    n_l2 = _int(P("number_of_L2s"), 0)
    private_l2 = _int(P("Private_L2"), 0) == 1
    for level, key, cfgname, count in ((2, "system.L20", "L2_config", n_l2),
                                       (3, "system.L30", "L3_config", _int(P("number_of_L3s"), 0))):
        if count <= 0 or key not in kids:
            continue
        k = kids[key]
        name = str(k.p("kvsim_name", f"L{level}"))
        c = _cache_cfg(name, k.p(cfgname), clock=k.clock(), level=level,
                       duty_cycle=float(k.s("duty_cycle", 1.0)), device=_own_device(k, key, device))
        bs = k.p("buffer_sizes")
        if isinstance(bs, list):
            c.buffers = tuple(int(x) for x in (bs + [0, 0, 0, 0])[:4])
        # McPAT prices every lower-level cache, private L2 included, tag then data (CACTI access mode 1)
        c.sequential = bool(_int(k.p("kvsim_sequential"), 1))
        ca = CacheActivity(reads=float(k.s("read_accesses")), writes=float(k.s("write_accesses")),
                           read_misses=float(k.s("read_misses")), write_misses=float(k.s("write_misses")),
                           writebacks=float(k.s("kvsim_writebacks", 0.0)))
        if level == 2 and private_l2:
            core.l2 = c
            c.name = "l2"
            c.count = 1
            for a in acts:
                a.l2_reads, a.l2_writes = ca.reads, ca.writes
                a.l2_read_misses, a.l2_write_misses = ca.read_misses, ca.write_misses
        else:
            c.count = count
            plat.caches.append(c)
            activity.caches[name] = ca
    for level, key, count in ((1, "system.L1Directory0", _int(P("number_of_L1Directories"), 0)),
                              (2, "system.L2Directory0", _int(P("number_of_L2Directories"), 0))):
        if count <= 0 or key not in kids:
            continue
        k = kids[key]
        v = k.p("Dir_config")
        if not isinstance(v, list) or len(v) < 2:
            raise McpatXmlError(f"{key}.Dir_config={v!r} needs capacity,block,...")
        v = v + [None] * 8
        name = str(k.p("kvsim_name", f"L{level}Directory"))
        d = DirectoryConfig(name=name, kind="cam" if _int(k.p("Directory_type"), 0) == 0 else "cache",
                            capacity_B=int(v[0]), block_B=int(v[1]), assoc=int(v[2] or 0),
                            clock_MHz=k.clock(), throughput_cycles=float(v[4] or 1),
                            latency_cycles=float(v[5] or 1), output_bits=int(v[6] or 8), count=count, level=level,
                            buffers=_buffer_sizes(k.p("buffer_sizes"), key), device=_own_device(k, key, device))
        plat.directories.append(d)
        activity.directories[name] = CacheActivity(reads=float(k.s("read_accesses")),
                                                    writes=float(k.s("write_accesses")),
                                                    read_misses=float(k.s("read_misses")),
                                                    write_misses=float(k.s("write_misses")))
    if homogeneous and n_cores > 1:
        # McPAT's convention: with homogeneous cores, the one core component describes all of them and its counts
        # (and the private L2s' counts) are chip totals over total_cycles; kvsim's Activity holds one core's share
        acts[0] = per_core_share(acts[0], n_cores)
    n_noc = _int(P("number_of_NoCs"), 0)
    for i in range(n_noc if _int(P("homogeneous_NoCs"), 1) == 0 else min(1, n_noc)):
        key = f"system.NoC{i}"
        if key not in kids:
            continue
        k = kids[key]
        name = str(k.p("kvsim_name", f"noc{i}"))
        kind = str(k.p("kvsim_kind", "bus" if _int(k.p("type"), 1) == 0 else "mesh"))
        n = NocConfig(name=name, kind=kind, nodes_x=_int(k.p("horizontal_nodes"), 1),
                      nodes_y=_int(k.p("vertical_nodes"), 1), in_ports=_int(k.p("input_ports"), 1),
                      out_ports=_int(k.p("output_ports"), 1), vcs=_int(k.p("virtual_channel_per_port"), 1),
                      buffer_entries=_int(k.p("input_buffer_entries_per_vc"), 1),
                      flit_bits=_int(k.p("flit_bits"), 64), clock_MHz=k.clock(),
                      link_throughput=float(_num(k.p("link_throughput"), 1)),
                      link_latency=float(_num(k.p("link_latency"), 1)),
                      global_link=bool(_int(k.p("has_global_link"), 0)),
                      chip_coverage=float(_num(k.p("chip_coverage"), 1.0)),
                      routed_over=float(_num(k.p("link_routing_over_percentage"), 0.5)),
                      duty_cycle=float(k.s("duty_cycle", 1.0)),
                      count=n_noc if _int(P("homogeneous_NoCs"), 1) == 1 else 1)
        plat.nocs.append(n)
        acc = float(k.s("total_accesses"))
        activity.nocs[name] = NocActivity(flits=float(k.s("kvsim_flits", acc)), hops=acc)
    if "system.mc" in kids:
        k = kids["system.mc"]
        plat.mc = MemCtrlConfig(count=_int(k.p("number_mcs"), 0), channels_per_mc=_int(k.p("memory_channels_per_mc"), 1),
                                io_clock_MHz=float(_num(k.p("mc_clock"), 800.0)),
                                peak_MBps=float(_num(k.p("peak_transfer_rate"), 12800.0)),
                                databus_bits=_int(k.p("databus_width"), 64),
                                addrbus_bits=_int(k.p("addressbus_width"), 32), ranks=_int(k.p("number_ranks"), 2),
                                low_power=bool(_int(k.p("type"), 0)), with_phy=bool(_int(k.p("withPHY"), 0)),
                                lvds=bool(_int(k.p("LVDS"), 1)), req_window=_int(k.p("req_window_size_per_channel"), 32),
                                io_buffer=_int(k.p("IO_buffer_size_per_channel"), 32),
                                block_B=_int(k.p("block_size"), 64))
        activity.dram = DramActivity(reads=float(k.s("memory_reads")), writes=float(k.s("memory_writes")),
                                     activates=float(k.s("kvsim_activates", 0.0)),
                                     precharges=float(k.s("kvsim_precharges", 0.0)),
                                     refreshes=float(k.s("kvsim_refreshes", 0.0)))
        if k.p("kvsim_dram_name") is not None:
            dev = {}
            for f in fields(DramDevice):
                v = k.p(f"kvsim_dram_{f.name}")
                if v is None:          # a field written after this file was (e.g. density_gbit): its default
                    continue
                dev[f.name] = str(v) if f.name == "name" else (int(v) if f.type in ("int", int) else float(v))
            plat.dram = DramConfig(device=DramDevice(**dev), channels=_int(k.p("kvsim_dram_channels"), 1),
                                   ranks_per_channel=_int(k.p("kvsim_dram_ranks_per_channel"), 2),
                                   devices_per_rank=_int(k.p("kvsim_dram_devices_per_rank"), 8))
    if "system.niu" in kids:
        k = kids["system.niu"]
        plat.nic = NicConfig(count=_int(k.p("number_units"), 0), ports=_int(k.p("kvsim_ports"), 1),
                             port_gbps=float(_num(k.p("kvsim_port_gbps"), 10.0)),
                             # McPAT's NIU is a port's MAC, PCS and SerDes only (power.niu): no packet buffer
                             # or DMA queues unless kvsim's export names them
                             buffer_KB=_int(k.p("kvsim_buffer_KB"), 0), queues=_int(k.p("kvsim_queues"), 0),
                             clock_MHz=float(_num(k.p("clockrate"), 350.0)), low_power=bool(_int(k.p("type"), 0)),
                             on_die=bool(_int(k.p("kvsim_on_die"), 1)), duty_cycle=float(k.s("duty_cycle", 1.0)),
                             load=float(k.s("total_load_perc", 0.7)))
        for f in ("rx_bytes", "tx_bytes", "rx_packets", "tx_packets", "pcie_tlps", "pcie_bytes"):
            setattr(activity.nic, f, float(k.s(f"kvsim_{f}", 0.0)))
        if k.s("kvsim_rx_bytes", None) is None and k.s("kvsim_tx_bytes", None) is None:
            # McPAT's own input: its ports carry total_load_perc of their line rate both ways
            n = plat.nic
            activity.nic.rx_bytes = activity.nic.tx_bytes = \
                n.load * n.ports * n.port_gbps * 1e9 / 8.0 * activity.seconds
    if "system.pcie" in kids:
        k = kids["system.pcie"]
        plat.pcie = PcieConfig(count=_int(k.p("number_units"), 0), lanes=_int(k.p("num_channels"), 8),
                               gen=_int(k.p("kvsim_gen"), 2), with_phy=bool(_int(k.p("withPHY"), 1)),
                               clock_MHz=float(_num(k.p("clockrate"), 350.0)), low_power=bool(_int(k.p("type"), 0)),
                               duty_cycle=float(k.s("duty_cycle", 1.0)), load=float(k.s("total_load_perc", 0.7)))
    plat.validate()
    return plat, activity


# ---------------------------------------------------------------------------------------------------- writer
def _fmt(v) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (list, tuple)):
        return ",".join(_fmt(x) for x in v)
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        return repr(v)
    return str(v)


def _sub(parent: ET.Element, cid: str, name: str) -> ET.Element:
    return ET.SubElement(parent, "component", id=cid, name=name)


def _param(el: ET.Element, name: str, value) -> None:
    ET.SubElement(el, "param", name=name, value=_fmt(value))


def _stat(el: ET.Element, name: str, value) -> None:
    ET.SubElement(el, "stat", name=name, value=_fmt(value))


def _clock(el: ET.Element, clock: float | None, fallback: float) -> None:
    """McPAT needs a clock on every uncore component; a kvsim clock of None (follow the domain) is marked so that
    it reads back as None."""
    _param(el, "clockrate", clock or fallback)
    if clock is None:
        _param(el, "kvsim_clock_follows_domain", 1)


def _cache_str(c: CacheConfig) -> list:
    return [c.capacity_B, c.block_B, c.assoc, c.banks, c.throughput_cycles, c.latency_cycles,
            c.output_bits, c.write_back]


def _write_core(sysel: ET.Element, i: int, p: Platform, a: CoreActivity) -> None:
    c = p.core
    el = _sub(sysel, f"system.core{i}", f"core{i}")
    _param(el, "clock_rate", p.clock_MHz)
    _param(el, "vdd", p.vdd or 0)
    _param(el, "power_gating_vcc", -1)
    _param(el, "opt_local", 0)
    for mp, attr, kind in CORE_PARAMS:
        v = getattr(c, attr)
        if kind == "nb":
            v = 0 if v else 1
        elif kind == "pair":
            v = [v, v]
        _param(el, mp, v)
    _param(el, "pipelines_per_core", [1, 1])
    # branch predictions per cycle; McPAT skips the predictor and BTB without it
    _param(el, "prediction_width", 1)
    _param(el, "LSU_order", "inorder")
    for ms, attr in CORE_STATS:
        _stat(el, ms, getattr(a, attr))
    ops = a.int_ops + a.fp_ops + a.mul_ops
    _stat(el, "total_instructions", a.committed_insts)
    _stat(el, "int_instructions", a.int_ops + a.mul_ops)
    _stat(el, "fp_instructions", a.fp_ops)
    _stat(el, "committed_int_instructions", a.int_ops + a.mul_ops)
    _stat(el, "committed_fp_instructions", a.fp_ops)
    _stat(el, "idle_cycles", 0)
    _stat(el, "busy_cycles", a.cycles)
    _stat(el, "pipeline_duty_cycle", min(1.0, a.committed_insts / a.cycles / c.issue_width) if a.cycles else 0)
    _stat(el, "cdb_alu_accesses", a.int_ops)
    _stat(el, "cdb_mul_accesses", a.mul_ops)
    _stat(el, "cdb_fpu_accesses", a.fp_ops)
    _stat(el, "function_calls", 0)
    _stat(el, "context_switches", 0)
    _stat(el, "kvsim_ops", ops)
    for k in DUTY_NAMES:
        _stat(el, f"{k}_duty_cycle", c.duty.get(k, 1.0))
    _param(el, "number_of_BPT", 2)
    pr = _sub(el, f"system.core{i}.predictor", "PBT")
    _param(pr, "local_predictor_size", [c.local_hist_bits, c.local_ctr_bits])
    _param(pr, "local_predictor_entries", c.local_pred_entries)
    _param(pr, "global_predictor_entries", c.global_pred_entries)
    _param(pr, "global_predictor_bits", c.global_ctr_bits)
    _param(pr, "chooser_predictor_entries", c.chooser_entries)
    _param(pr, "chooser_predictor_bits", c.chooser_bits)
    for nm, entries, acc, miss in (("itlb", c.itlb_entries, a.itlb_accesses, a.itlb_misses),
                                   ("dtlb", c.dtlb_entries, a.dtlb_accesses, a.dtlb_misses)):
        t = _sub(el, f"system.core{i}.{nm}", nm)
        _param(t, "number_entries", entries)
        _stat(t, "total_accesses", acc)
        _stat(t, "total_misses", miss)
        _stat(t, "conflicts", 0)
    ic = _sub(el, f"system.core{i}.icache", "icache")
    _param(ic, "icache_config", _cache_str(c.icache))
    _param(ic, "buffer_sizes", list(c.icache.buffers))
    _stat(ic, "read_accesses", a.l1i_reads)
    _stat(ic, "read_misses", a.l1i_misses)
    _stat(ic, "conflicts", 0)
    dc = _sub(el, f"system.core{i}.dcache", "dcache")
    _param(dc, "dcache_config", _cache_str(c.dcache))
    _param(dc, "buffer_sizes", list(c.dcache.buffers))
    _stat(dc, "read_accesses", a.l1d_reads)
    _stat(dc, "write_accesses", a.l1d_writes)
    _stat(dc, "read_misses", a.l1d_read_misses)
    _stat(dc, "write_misses", a.l1d_write_misses)
    _stat(dc, "conflicts", 0)
    _param(el, "number_of_BTB", 2)
    b = _sub(el, f"system.core{i}.BTB", "BTB")
    _param(b, "BTB_config", _cache_str(c.btb)[:6])
    _stat(b, "read_accesses", a.btb_reads)
    _stat(b, "write_accesses", a.btb_writes)


def _write_cache(sysel, cid, name, cfgname, c: CacheConfig | None, ca: CacheActivity, clock, device: str,
                 vdd=0):
    el = _sub(sysel, cid, name)
    if c is None:
        c = CacheConfig(name, 1048576, 64, 16)
    _param(el, cfgname, _cache_str(c))
    _param(el, "buffer_sizes", list(c.buffers))
    _clock(el, c.clock_MHz, clock)
    _param(el, "vdd", vdd)
    _param(el, "power_gating_vcc", -1)
    _param(el, "ports", [c.rw_ports, c.rd_ports, c.wr_ports] if (c.rd_ports or c.wr_ports) else [1, 1, 1])
    _param(el, "device_type", DEVICE_NAMES[c.device or device])
    _param(el, "kvsim_name", c.name)
    _param(el, "kvsim_sequential", c.sequential)
    _stat(el, "read_accesses", ca.reads)
    _stat(el, "write_accesses", ca.writes)
    _stat(el, "read_misses", ca.read_misses)
    _stat(el, "write_misses", ca.write_misses)
    _stat(el, "conflicts", 0)
    _stat(el, "kvsim_writebacks", ca.writebacks)
    _stat(el, "duty_cycle", c.duty_cycle)


def to_xml(platform: Platform, activity: Activity | None = None, *, policy: str = "round") -> str:
    """McPAT input XML (text) for a platform and its activity. Values McPAT does not accept (temperature,
    associativities: ``power.mcpat_rules``) are rounded with a warning (``policy="round"``) or refused
    (``policy="refuse"``)."""
    platform.validate()
    p = legalize(platform, policy)
    act = activity or Activity(seconds=1e-3, cores=[CoreActivity(cycles=p.clock_MHz * 1e3)])
    cyc = act.seconds * p.clock_MHz * 1e6
    root = ET.Element("component", id="root", name="root")
    s = _sub(root, "system", "system")
    cores_acts = act.cores or [CoreActivity(cycles=cyc)]
    homogeneous = len(cores_acts) <= 1 or all(x == cores_acts[0] for x in cores_acts)
    shared = {2: None, 3: None}
    for c in p.caches:
        if c.level not in shared or shared[c.level] is not None:
            raise McpatXmlError(f"cache {c.name}: McPAT holds one shared cache type per level (2, 3); "
                                f"level {c.level} is already taken or not supported")
        shared[c.level] = c
    if p.core.l2 is not None and shared[2] is not None:
        raise McpatXmlError("a private L2 and a shared level-2 cache cannot both be written to McPAT's L20")
    dirs = {1: None, 2: None}
    for d in p.directories:
        if d.level not in dirs or dirs[d.level] is not None:
            raise McpatXmlError(f"directory {d.name}: McPAT holds one directory type per level (1, 2)")
        dirs[d.level] = d
    if len(p.nocs) > 1:
        raise McpatXmlError("McPAT export supports one NoC type (use count for several identical NoCs)")
    noc = p.nocs[0] if p.nocs else None
    _param(s, "number_of_cores", p.cores)
    _param(s, "number_of_L1Directories", dirs[1].count if dirs[1] else 0)
    _param(s, "number_of_L2Directories", dirs[2].count if dirs[2] else 0)
    _param(s, "number_of_L2s", p.cores if p.core.l2 is not None else (shared[2].count if shared[2] else 0))
    _param(s, "Private_L2", 1 if p.core.l2 is not None else 0)
    _param(s, "number_of_L3s", shared[3].count if shared[3] else 0)
    _param(s, "number_of_NoCs", noc.count if noc else 0)
    for h in ("homogeneous_cores",):
        _param(s, h, 1 if homogeneous else 0)
    for h in ("homogeneous_L2s", "homogeneous_L1Directories", "homogeneous_L2Directories", "homogeneous_L3s",
              "homogeneous_ccs", "homogeneous_NoCs"):
        _param(s, h, 1)
    _param(s, "core_tech_node", p.node_nm)
    _param(s, "target_core_clockrate", p.clock_MHz)
    _param(s, "temperature", p.temperature_K)
    _param(s, "number_cache_levels", 3 if shared[3] else 2)
    _param(s, "interconnect_projection_type", 0)
    _param(s, "device_type", DEVICE_NAMES[p.device])
    _param(s, "longer_channel_device", p.long_channel)
    _param(s, "power_gating", p.power_gating)
    _param(s, "machine_bits", p.core.machine_bits)
    _param(s, "Embedded", int(p.core.embedded))
    _param(s, "opt_clockrate", int(p.core.opt_clockrate))
    _param(s, "virtual_address_width", p.core.vaddr_bits)
    _param(s, "physical_address_width", p.core.paddr_bits)
    _param(s, "virtual_memory_page_size", 4096)
    _param(s, "kvsim_name", p.name)
    if p.part and p.part != p.name:   # a second socket of a product (its name carries the socket's index)
        _param(s, "kvsim_part", p.part)
    _param(s, "kvsim_seconds", act.seconds)
    if p.uncore_clock_MHz is not None:
        _param(s, "kvsim_uncore_clock", p.uncore_clock_MHz)
    if p.tdp_W is not None:
        _param(s, "kvsim_tdp", p.tdp_W)
    _stat(s, "total_cycles", cyc)
    _stat(s, "idle_cycles", 0)
    _stat(s, "busy_cycles", cyc)
    _stat(s, "kvsim_requests", act.requests)
    if homogeneous:
        cores_acts = [chip_total(cores_acts, max(1, p.cores))]
        _write_core(s, 0, p, cores_acts[0])
    else:
        for i, a in enumerate(cores_acts):
            _write_core(s, i, p, a)
    for lvl, cid in ((1, "system.L1Directory0"), (2, "system.L2Directory0")):
        d = dirs[lvl]
        el = _sub(s, cid, cid.split(".")[1])
        if d is None:
            d = DirectoryConfig("unused", "cam", 2048, 1)
        _param(el, "Directory_type", 0 if d.kind == "cam" else 1)
        _param(el, "Dir_config", [d.capacity_B, d.block_B, d.assoc, 1, d.throughput_cycles, d.latency_cycles,
                                  d.output_bits])
        _param(el, "buffer_sizes", list(d.buffers))
        _clock(el, d.clock_MHz, p.clock_MHz)
        _param(el, "vdd", 0)
        _param(el, "power_gating_vcc", -1)
        _param(el, "ports", [1, 1, 1])
        _param(el, "device_type", DEVICE_NAMES[d.device or p.device])
        _param(el, "kvsim_name", d.name)
        da = act.directories.get(d.name, CacheActivity())
        _stat(el, "read_accesses", da.reads)
        _stat(el, "write_accesses", da.writes)
        _stat(el, "read_misses", da.read_misses)
        _stat(el, "write_misses", da.write_misses)
        _stat(el, "conflicts", 0)
    if p.core.l2 is not None:
        a0 = cores_acts[0]
        _write_cache(s, "system.L20", "L20", "L2_config", p.core.l2,
                     CacheActivity(a0.l2_reads, a0.l2_writes, a0.l2_read_misses, a0.l2_write_misses), p.clock_MHz,
                     p.device)
    else:
        c = shared[2]
        _write_cache(s, "system.L20", "L20", "L2_config", c,
                     act.caches.get(c.name, CacheActivity()) if c else CacheActivity(), p.clock_MHz, p.device)
    c = shared[3]
    _write_cache(s, "system.L30", "L30", "L3_config", c,
                 act.caches.get(c.name, CacheActivity()) if c else CacheActivity(), p.clock_MHz, p.device)
    el = _sub(s, "system.NoC0", "noc0")
    n = noc or NocConfig()
    _clock(el, n.clock_MHz, p.clock_MHz)
    _param(el, "vdd", 0)
    _param(el, "power_gating_vcc", -1)
    _param(el, "type", 0 if n.kind == "bus" else 1)
    _param(el, "kvsim_kind", n.kind)
    _param(el, "kvsim_name", n.name)
    _param(el, "horizontal_nodes", n.nodes_x)
    _param(el, "vertical_nodes", n.nodes_y)
    _param(el, "has_global_link", n.global_link)
    _param(el, "link_throughput", n.link_throughput)
    _param(el, "link_latency", n.link_latency)
    _param(el, "input_ports", n.in_ports)
    _param(el, "output_ports", n.out_ports)
    _param(el, "virtual_channel_per_port", n.vcs)
    _param(el, "input_buffer_entries_per_vc", n.buffer_entries)
    _param(el, "flit_bits", n.flit_bits)
    _param(el, "chip_coverage", n.chip_coverage)
    _param(el, "link_routing_over_percentage", n.routed_over)
    na = act.nocs.get(n.name, NocActivity())
    _stat(el, "total_accesses", na.hops)
    _stat(el, "kvsim_flits", na.flits)
    _stat(el, "duty_cycle", n.duty_cycle)
    m = p.mc
    el = _sub(s, "system.mc", "mc")
    for k, v in (("type", m.low_power), ("mc_clock", m.io_clock_MHz), ("vdd", 0), ("power_gating_vcc", -1),
                 ("peak_transfer_rate", m.peak_MBps), ("block_size", m.block_B), ("number_mcs", m.count),
                 ("memory_channels_per_mc", m.channels_per_mc), ("number_ranks", m.ranks), ("withPHY", m.with_phy),
                 ("LVDS", m.lvds),
                 ("req_window_size_per_channel", m.req_window), ("IO_buffer_size_per_channel", m.io_buffer),
                 ("databus_width", m.databus_bits), ("addressbus_width", m.addrbus_bits)):
        _param(el, k, v)
    if p.dram is not None:
        for f in fields(DramDevice):
            _param(el, f"kvsim_dram_{f.name}", getattr(p.dram.device, f.name))
        _param(el, "kvsim_dram_channels", p.dram.channels)
        _param(el, "kvsim_dram_ranks_per_channel", p.dram.ranks_per_channel)
        _param(el, "kvsim_dram_devices_per_rank", p.dram.devices_per_rank)
    d = act.dram
    _stat(el, "memory_accesses", d.reads + d.writes)
    _stat(el, "memory_reads", d.reads)
    _stat(el, "memory_writes", d.writes)
    _stat(el, "kvsim_activates", d.activates)
    _stat(el, "kvsim_precharges", d.precharges)
    _stat(el, "kvsim_refreshes", d.refreshes)
    nc = p.nic
    el = _sub(s, "system.niu", "niu")
    for k, v in (("type", nc.low_power), ("clockrate", nc.clock_MHz), ("vdd", 0), ("power_gating_vcc", -1),
                 ("number_units", nc.count), ("kvsim_ports", nc.ports), ("kvsim_port_gbps", nc.port_gbps),
                 ("kvsim_buffer_KB", nc.buffer_KB), ("kvsim_queues", nc.queues), ("kvsim_on_die", nc.on_die)):
        _param(el, k, v)
    _stat(el, "duty_cycle", nc.duty_cycle)
    _stat(el, "total_load_perc", nc.load)
    for f in ("rx_bytes", "tx_bytes", "rx_packets", "tx_packets", "pcie_tlps", "pcie_bytes"):
        _stat(el, f"kvsim_{f}", getattr(act.nic, f))
    pc = p.pcie
    el = _sub(s, "system.pcie", "pcie")
    for k, v in (("type", pc.low_power), ("withPHY", pc.with_phy), ("clockrate", pc.clock_MHz), ("vdd", 0),
                 ("power_gating_vcc", -1), ("number_units", pc.count), ("num_channels", pc.lanes),
                 ("kvsim_gen", pc.gen)):
        _param(el, k, v)
    _stat(el, "duty_cycle", pc.duty_cycle)
    _stat(el, "total_load_perc", pc.load)
    el = _sub(s, "system.flashc", "flashc")
    _param(el, "number_flashcs", 0)
    _param(el, "type", 1)
    _param(el, "withPHY", 1)
    _param(el, "peak_transfer_rate", 200)
    _stat(el, "duty_cycle", 1.0)
    _stat(el, "total_load_perc", 0.7)
    ET.indent(root, space="\t")
    return '<?xml version="1.0" ?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write(path: str | Path, platform: Platform, activity: Activity | None = None, *,
          policy: str = "round") -> Path:
    path = Path(path)
    path.write_text(to_xml(platform, activity, policy=policy))
    return path
