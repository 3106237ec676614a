"""Per-component output in McPAT's component tree, so a result can be compared with McPAT's printout line by line.

McPAT (``-print_level 5``) prints the processor, then totals per component type (``Total Cores``, ``Total L2s``,
``Total L3s``, ``Total First/Second Level Directory``, ``Total NoCs (Network/Bus)``, ``Total MCs``, ``Total NIUs``,
``Total PCIes``), then one core and its units (``Instruction Fetch Unit`` with ``Instruction Cache``, ``Branch
Target Buffer``, ``Branch Predictor``, ``Instruction Buffer``, ``Instruction Decoder``; ``Renaming Unit``; ``Load
Store Unit`` with ``Data Cache``; ``Memory Management Unit`` with ``Itlb``, ``Dtlb``; ``Execution Unit`` with
``Register Files``, ``Instruction Scheduler``, ``Integer ALUs``, ``Floating Point Units (FPUs)``, ``Complex ALUs
(Mul/Div)``, ``Results Broadcast Bus``; a private ``L2``). ``tree(result)`` gives kvsim's figures under those names
(per-core lines are one core's share, except runtime dynamic power: all cores, as McPAT prints it); ``parse_out(text)`` reads McPAT's printout into the same shape;
``compare(result, text)`` puts them side by side. kvsim's pipeline latches and control (``core.pipeline``) have no
McPAT line of their own (McPAT spreads them over the units): they appear as ``Pipeline (kvsim)``.
"""

from __future__ import annotations

import re

import pandas as pd

METRICS = ("area_mm2", "peak_dynamic_W", "subthreshold_leakage_W", "gate_leakage_W", "runtime_dynamic_W")
_OUT_KEYS = {"Area": "area_mm2", "Area Overhead": "area_mm2", "Peak Dynamic": "peak_dynamic_W", "Subthreshold Leakage": "subthreshold_leakage_W",
             "Gate Leakage": "gate_leakage_W", "Runtime Dynamic": "runtime_dynamic_W"}

# chip-level lines: McPAT name -> Struct.component
TOTALS = {"Total Cores": "cores", "Total L2s": "l2", "Total L3s": "l3", "Total First Level Directory": "l1dir",
          "Total Second Level Directory": "l2dir", "Total NoCs (Network/Bus)": "noc",
          "Total MCs": "mc", "Total NIUs": "niu", "Total PCIes": "pcie"}

# one core's lines: McPAT name -> (parent line, kvsim struct paths)
CORE_UNITS = {
    "Instruction Cache": ("Instruction Fetch Unit", ("core.ifu.icache",)),
    "Branch Target Buffer": ("Instruction Fetch Unit", ("core.ifu.btb",)),
    "Branch Predictor": ("Instruction Fetch Unit", ("core.ifu.predictor",)),
    "Instruction Buffer": ("Instruction Fetch Unit", ("core.ifu.inst_buffer",)),
    "Instruction Decoder": ("Instruction Fetch Unit", ("core.ifu.decoder",)),
    "Data Cache": ("Load Store Unit", ("core.lsu.dcache",)),
    "LoadQ/StoreQ (kvsim: one line)": ("Load Store Unit", ("core.lsu.lsq",)),
    "Itlb": ("Memory Management Unit", ("core.mmu.itlb",)),
    "Dtlb": ("Memory Management Unit", ("core.mmu.dtlb",)),
    "Register Files": ("Execution Unit", ("core.exu.regfile",)),
    "Instruction Scheduler": ("Execution Unit", ("core.scheduler.iq", "core.scheduler.rob")),
    "Integer ALUs": ("Execution Unit", ("core.exu.alus",)),
    "Floating Point Units (FPUs)": ("Execution Unit", ("core.exu.fpus",)),
    "Complex ALUs (Mul/Div)": ("Execution Unit", ("core.exu.muls",)),
    "Results Broadcast Bus": ("Execution Unit", ("core.exu.bypass",)),
}
UNITS = {"Instruction Fetch Unit": ("core.ifu.",), "Renaming Unit": ("core.rename",),
         "Load Store Unit": ("core.lsu.",), "Memory Management Unit": ("core.mmu.",),
         "Execution Unit": ("core.exu.", "core.scheduler."), "L2": ("core.l2",),
         "Pipeline (kvsim)": ("core.pipeline",), "Undifferentiated core (kvsim)": ("core.undiff",)}


def tree(result, niu_on_die: bool = False) -> pd.DataFrame:
    """kvsim's figures as McPAT's tree: columns ``line``, ``level`` (0 processor, 1 totals, 2 core, 3 unit, 4
    sub-unit; McPAT's printout has level 5 for parts of sub-units), ``parent`` and the five metrics; then the
    uncore blocks (``uncore_tree``). ``niu_on_die``: count the NICs on the die, as McPAT does with every NIU of its
    input (kvsim's PCIe-attached NICs are off die)."""
    s = result.structures
    comp = [x.component for x in result.model.structs]
    s = s.assign(mcpat_component=comp)
    if niu_on_die:
        s.loc[s.mcpat_component == "niu", "on_die"] = True
    cores = max(1, result.model.platform.cores)
    rows = []

    def add(line, level, parent, df, per_core=False):
        vals = df[list(METRICS)].sum()
        if per_core:
            # McPAT prints a homogeneous core's area, peak and leakage per core but its runtime dynamic power
            # over all cores (the activity is the chip's total): the same here
            vals = vals / cores
            vals["runtime_dynamic_W"] *= cores
        rows.append(dict(line=line, level=level, parent=parent, **{m: float(vals[m]) for m in METRICS}))

    on_die = s[s.on_die]
    add("Processor", 0, "", on_die)
    for line, c in TOTALS.items():
        part = on_die[on_die.mcpat_component == c]
        if len(part):
            add(line, 1, "Processor", part)
    core = on_die[on_die.component.str.startswith("core.")]
    if len(core):
        add("Core", 2, "", core, per_core=True)
        for unit, prefixes in UNITS.items():
            part = core[core.component.str.startswith(prefixes)]
            if len(part):
                add(unit, 3, "Core", part, per_core=True)
                for line, (parent, paths) in CORE_UNITS.items():
                    if parent == unit:
                        sub = core[core.component.isin(paths)]
                        if len(sub):
                            add(line, 4, unit, sub, per_core=True)
    return pd.concat([pd.DataFrame(rows), uncore_tree(result)], ignore_index=True)


# McPAT's blocks after the core (one instance each, except ``NOC``: all routers or buses; runtime dynamic power
# always over all instances, as McPAT prints it): kvsim line -> (McPAT's block or line names, kvsim components or
# struct path suffixes, level). Names here are unique in the tree: a shared cache's block is ``L2 (one)``, apart
# from the core's private ``L2``.
UNCORE_LINES = {
    "L2 (one)": (("L2",), "l2", 1),
    "L3 (one)": (("L3",), "l3", 1),
    "First Level Directory (one)": (("First Level Directory",), "l1dir", 1),
    "Second Level Directory (one)": (("Second Level Directory",), "l2dir", 1),
    "Memory Controller (one)": (("Memory Controller",), "mc", 1),
    "Front End Engine": (("Front End Engine",), ".front_end", 2),
    "Transaction Engine": (("Transaction Engine",), ".transaction_engine", 2),
    "PHY": (("PHY",), ".phy", 2),
    "NIU (one)": (("NIU",), "niu", 1),
    "PCIe (one)": (("PCIe",), "pcie", 1),
    "NOC": (("NOC", "BUSES"), "noc", 1),
    "Router (one)": (("Router",), ".router", 2),
    "Virtual Channel Buffer": (("Virtual Channel Buffer",), ".router_buffers", 3),
    "Crossbar + Arbiter": (("Crossbar", "Arbiter"), ".routers", 3),     # area: the router less its buffers
    "Per Router Links": (("Per Router Links",), ".links", 3),
    "Bus (one)": (("Bus",), ".bus", 2),
}
_BLOCK_HEADERS = {"L2", "L3", "First Level Directory", "Second Level Directory", "Memory Controller", "NIU", "PCIe",
                  "NOC", "BUSES"}


def uncore_tree(result) -> pd.DataFrame:
    """kvsim's uncore as McPAT's blocks (``UNCORE_LINES``): per instance for area, peak and leakage, over all
    instances for runtime dynamic power."""
    s = result.structures
    structs = result.model.structs
    comp = pd.Series([x.component for x in structs], index=s.index)
    count = pd.Series([x.count for x in structs], index=s.index)
    rows = []
    for line, (_, key, level) in UNCORE_LINES.items():
        if key.startswith("."):
            parts = (key,) if key != ".router" else (".routers", ".router_buffers", ".links")
            sel = s.component.str.endswith(parts) & comp.isin(["noc", "mc"])
        else:
            sel = comp == key
        if not sel.any():
            continue
        # one instance: the structures' count (routers x networks, controllers, slices); a controller's parts are
        # per controller, a router's per router
        n = float(count[sel].max()) if key not in ("noc",) else 1.0
        vals = s.loc[sel, list(METRICS)].sum()
        per = vals / max(1.0, n)
        per["runtime_dynamic_W"] = vals["runtime_dynamic_W"]
        rows.append(dict(line=line, level=level, parent="", **{m: float(per[m]) for m in METRICS}))
    return pd.DataFrame(rows, columns=["line", "level", "parent", *METRICS])


def parse_blocks(text: str) -> pd.DataFrame:
    """McPAT's uncore blocks (shared caches, directories, memory controller, NIU, PCIe, NoC with its routers and
    their parts) as rows named like ``UNCORE_LINES``; a ``Crossbar + Arbiter`` row sums those two lines."""
    names = {m: line for line, (mcpat, _, _) in UNCORE_LINES.items() for m in mcpat if line != "Crossbar + Arbiter"}
    rows: list[dict] = []
    for block in re.split(r"^\*{20,}\s*$", text, flags=re.M):
        lines = [x for x in block.splitlines() if x.strip()]
        if not lines or lines[0].strip().rstrip(":").strip() not in _BLOCK_HEADERS:
            continue
        current = None
        for raw in lines:
            v = _VALUE.match(raw)
            if v:
                if current is not None:
                    current.setdefault(_OUT_KEYS[v.group(1)], float(v.group(2)))
                continue
            if "=" in raw:
                continue
            name = raw.strip().rstrip(":").strip()
            current = dict(line=names.get(name, name), level=UNCORE_LINES.get(names.get(name, ""), ("", "", 4))[2])
            rows.append(current)
    df = pd.DataFrame(rows, columns=["line", "level", *METRICS])
    parts = df[df.line.isin(["Crossbar", "Arbiter"])]
    if len(parts):
        row = parts[list(METRICS)].fillna(0.0).sum()
        # McPAT's router is its buffers high and buffers plus crossbar wide: the crossbar's share of the router's
        # area is the router less its buffers, not the crossbar's own printed square
        by = df.drop_duplicates("line").set_index("line")
        if {"Router (one)", "Virtual Channel Buffer"} <= set(by.index):
            row["area_mm2"] = by.loc["Router (one)", "area_mm2"] - by.loc["Virtual Channel Buffer", "area_mm2"]
        df = pd.concat([df, pd.DataFrame([dict(line="Crossbar + Arbiter", level=3, **row.to_dict())])],
                       ignore_index=True)
    return df


_LINE = re.compile(r"^(\s*)([A-Za-z][^=]*?):\s*(.*)$")
_BARE = re.compile(r"^(\s+)(L2)\s*$")
_VALUE = re.compile(r"^\s*(Area|Area Overhead|Peak Dynamic|Subthreshold Leakage|Gate Leakage|Runtime Dynamic)\s*=\s*"
                    r"([-+0-9.eE]+)")


def parse_out(text: str) -> pd.DataFrame:
    """McPAT's printout (``-print_level`` >= 3) as rows ``line``, ``level`` and the five metrics: the processor,
    its totals, and the first core's units (names as McPAT prints them, counts like ``(Count: 6 )`` dropped)."""
    rows: list[dict] = []
    current = None
    section = None
    for raw in text.splitlines():
        if raw.startswith("*****") and section == "core":
            section, current = "done", None      # the first core's block ends at the separator
            continue
        v = _VALUE.match(raw)
        if v and current is not None:
            current[_OUT_KEYS[v.group(1)]] = float(v.group(2))
            continue
        m = _LINE.match(raw)
        if not m and section == "core":
            # McPAT prints a private L2 as a bare name under the core ("    L2", no colon)
            m = _BARE.match(raw)
        if not m or "=" in raw:
            continue
        indent, name = len(m.group(1)), m.group(2).strip()
        name = re.sub(r"\s*\(Count.*$", "", name).strip()
        if name == "Processor":
            section = "processor"
        elif name == "Core":
            if section == "core":      # a second core block (heterogeneous): keep the first
                section = "done"
                current = None
                continue
            section = "core"
        elif indent == 0 and name not in ("Processor", "Core"):
            section = "other" if section != "done" else section
        if section not in ("processor", "core"):
            current = None
            continue
        name = name.split(":")[0].strip()
        if section == "processor" and name.startswith("Total "):
            name = "Total Cores" if name.startswith("Total Cores") else name
        if any(r["line"] == name for r in rows):
            current = None
            continue
        level = {"Processor": 0, "Core": 2}.get(name, 1 if section == "processor" else
                                                (3 if indent <= 6 else 4 if indent <= 10 else 5))
        current = dict(line=name, level=level)
        rows.append(current)
    df = pd.DataFrame(rows)
    for m in METRICS:
        if m not in df:
            df[m] = float("nan")
    return df


def compare(result, mcpat_out: str, niu_on_die: bool = False) -> pd.DataFrame:
    """kvsim's tree beside McPAT's, line by line, with % errors (lines only one side has keep NaN on the other)."""
    ours = tree(result, niu_on_die).drop_duplicates("line").set_index("line")
    theirs = pd.concat([parse_out(mcpat_out), parse_blocks(mcpat_out)], ignore_index=True)
    theirs = theirs.drop_duplicates("line").set_index("line")
    names = list(ours.index) + [n for n in theirs.index if n not in ours.index]
    rows = []
    for n in names:
        row = {"line": n, "level": int(ours.level.get(n, theirs.level.get(n, 9)))}
        for m in METRICS:
            o = ours[m].get(n, float("nan"))
            t = theirs[m].get(n, float("nan")) if m in theirs else float("nan")
            row[f"kvsim_{m}"] = o
            row[f"mcpat_{m}"] = t
            row[f"error_{m}_pct"] = 100.0 * (o / t - 1.0) if t and t == t and o == o else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)
