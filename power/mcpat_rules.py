"""McPAT 1.3's input rules: making a platform exportable, and checking an exported XML against them.

Real McPAT 1.3 refuses (or silently mis-prices) inputs that break these rules, and it can print no results yet
exit with status 0, so a bad export is easy to miss. The rules encoded here:

* ``system.temperature`` is a whole multiple of 10 K in 300..400 K (McPAT's leakage tables are per 10 K);
* every cache associativity (``icache_config``, ``dcache_config``, ``BTB_config``, ``L2_config``, ``L3_config``,
  and ``Dir_config`` of a directory cache) is a power of two; a CAM directory (``Directory_type`` 0) has 0;
* every core component has ``prediction_width`` (without it McPAT drops the branch predictor and BTB) and the
  predictor and BTB components;
* ``core_tech_node`` within McPAT's range (22-180 nm), ``device_type`` 0/1/2, clocks > 0, ``number_of_cores`` >= 1,
  a cache's capacity at least one set (block x associativity);
* CACTI's array rules (its ``InputParameter::error_checking``): every bank of a cache holds at least 64 bytes and,
  unless fully associative, at least 16 sets (the stacks' vestigial 256-byte LLC in four banks of one set, or
  their 12-byte directory, make McPAT stop with "no valid data array organizations found"); so does a return-
  address stack of 8 48-bit entries (``cacti_min_entries``: measured, 16 run).

``legalize(platform, policy)`` makes a platform follow the rules before writing: ``policy="round"`` rounds the
temperature to the nearest allowed value, each associativity to the nearest power of two and a cache too small
for CACTI up to its smallest array (16 sets, 64 bytes a bank), with a
``McpatExportWarning`` naming what changed; ``policy="refuse"`` raises ``McpatExportError`` instead.
``check(xml_text)`` lists every rule an XML breaks (empty list: McPAT accepts it).
"""

from __future__ import annotations

import math
import warnings
import xml.etree.ElementTree as ET
from dataclasses import replace

from .config import CacheConfig, Platform

TEMPERATURE_MIN_K = 300
TEMPERATURE_MAX_K = 400
TEMPERATURE_STEP_K = 10
NODE_RANGE_NM = (22.0, 180.0)
CACHE_CONFIGS = ("icache_config", "dcache_config", "BTB_config", "L2_config", "L3_config")
POLICIES = ("round", "refuse")


class McpatExportError(ValueError):
    """The platform cannot be written as an input McPAT accepts (with ``policy="refuse"``)."""


class McpatExportWarning(UserWarning):
    """A value was rounded to one McPAT accepts."""


def is_power_of_two(n: int) -> bool:
    return n >= 1 and (n & (n - 1)) == 0


def nearest_power_of_two(n: float) -> int:
    """Nearest power of two in log scale (ties go up)."""
    if n <= 1:
        return 1
    lo = 1 << int(math.floor(math.log2(n)))
    hi = lo * 2
    return lo if n / lo < hi / n else hi


CACTI_MIN_BANK_B = 64
# Fewest rows (sets a bank, entries of an array) McPAT's CACTI organises: measured with McPAT 1.3 on the Mercury
# export, an 8-set 512-byte LLC and an 8-entry return-address stack stop it ("no valid data array organizations
# found"), 16 sets run.
CACTI_MIN_ROWS = 16


def cacti_min_capacity_B(block_B: int, assoc: int, banks: int = 1) -> int:
    """The smallest capacity CACTI builds for a cache of this block, associativity (0: fully associative) and
    banks: at least 64 bytes a bank and, unless fully associative, ``CACTI_MIN_ROWS`` sets a bank."""
    per_bank = CACTI_MIN_BANK_B if assoc == 0 else max(CACTI_MIN_BANK_B, CACTI_MIN_ROWS * block_B * assoc)
    return per_bank * max(1, banks)


def cacti_min_entries(width_bits: int) -> int:
    """The fewest entries of ``width_bits`` (rounded up to bytes) McPAT's CACTI builds a return-address stack of, as
    measured with McPAT 1.3: with 48-bit addresses (6-byte entries) 8 entries stop it ("no valid data array
    organizations found") and 16 run; McPAT's own Cortex-A9 example runs 4 entries of 32-bit addresses. Entries of a
    power-of-two number of bytes have no measured minimum (1); others take ``CACTI_MIN_ROWS``."""
    return 1 if is_power_of_two(math.ceil(width_bits / 8)) else CACTI_MIN_ROWS


def legal_temperature(t_K: float) -> int:
    t = TEMPERATURE_STEP_K * round(t_K / TEMPERATURE_STEP_K)
    return int(min(TEMPERATURE_MAX_K, max(TEMPERATURE_MIN_K, t)))


def legalize(p: Platform, policy: str = "round") -> Platform:
    """A copy of ``p`` that follows McPAT's input rules (see the module docstring)."""
    if policy not in POLICIES:
        raise ValueError(f"policy={policy!r}: allowed {', '.join(POLICIES)}")
    changes: list[str] = []

    def fix_cache(where: str, c: CacheConfig | None) -> CacheConfig | None:
        if c is None:
            return c
        if not is_power_of_two(c.assoc):
            a = nearest_power_of_two(c.assoc)
            changes.append(f"{where}.assoc={c.assoc} -> {a} (McPAT needs a power of two)")
            c = replace(c, assoc=a)
        smallest = cacti_min_capacity_B(c.block_B, c.assoc, c.banks)
        if c.capacity_B < smallest:
            changes.append(f"{where}.capacity_B={c.capacity_B} -> {smallest} (CACTI's smallest array: "
                           f"{CACTI_MIN_ROWS} sets, {CACTI_MIN_BANK_B} bytes a bank)")
            c = replace(c, capacity_B=smallest)
        return c

    temperature = legal_temperature(p.temperature_K)
    if temperature != p.temperature_K:
        changes.append(f"temperature_K={p.temperature_K:g} -> {temperature} (McPAT needs a multiple of "
                       f"{TEMPERATURE_STEP_K} K in {TEMPERATURE_MIN_K}-{TEMPERATURE_MAX_K} K)")
    ras = max(p.core.ras, cacti_min_entries(p.core.vaddr_bits))
    if ras != p.core.ras:
        changes.append(f"core.ras={p.core.ras} -> {ras} (CACTI's smallest array of "
                       f"{math.ceil(p.core.vaddr_bits / 8)}-byte return addresses: {ras} entries)")
    core = replace(p.core, ras=ras, icache=fix_cache("core.icache", p.core.icache),
                   dcache=fix_cache("core.dcache", p.core.dcache), btb=fix_cache("core.btb", p.core.btb),
                   l2=fix_cache("core.l2", p.core.l2))
    caches = [fix_cache(c.name, c) for c in p.caches]
    dirs = []
    for d in p.directories:
        if d.kind == "cache" and not is_power_of_two(d.assoc):
            a = nearest_power_of_two(d.assoc)
            changes.append(f"{d.name}.assoc={d.assoc} -> {a} (McPAT needs a power of two)")
            d = replace(d, assoc=a)
        smallest = cacti_min_capacity_B(d.block_B, d.assoc if d.kind == "cache" else 0, 1)
        if d.capacity_B < smallest:
            changes.append(f"{d.name}.capacity_B={d.capacity_B} -> {smallest} (CACTI's smallest array: "
                           f"{CACTI_MIN_ROWS} sets, {CACTI_MIN_BANK_B} bytes a bank)")
            d = replace(d, capacity_B=smallest)
        dirs.append(d)
    if not changes:
        return p
    if policy == "refuse":
        raise McpatExportError(f"platform {p.name!r} is not a valid McPAT input: " + "; ".join(changes))
    warnings.warn(McpatExportWarning(f"McPAT export of {p.name!r} rounded: " + "; ".join(changes)), stacklevel=3)
    return replace(p, temperature_K=float(temperature), core=core, caches=caches, directories=dirs)


# ---------------------------------------------------------------------------------------------- the schema check
def _params(el: ET.Element) -> dict[str, str]:
    return {x.get("name"): (x.get("value") or "").strip() for x in el.findall("param")}


def _number(v: str | None) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _numbers(v: str | None) -> list[float] | None:
    if v is None:
        return None
    try:
        return [float(x) for x in v.split(",") if x.strip()]
    except ValueError:
        return None


def check(xml_text: str) -> list[str]:
    """Every McPAT input rule ``xml_text`` breaks, one message each (an empty list: it is a valid input)."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as e:
        return [f"not XML: {e}"]
    comps = {c.get("id"): c for c in root.iter("component")}
    problems: list[str] = []
    sysel = comps.get("system")
    if root.get("id") != "root" or sysel is None:
        return ["needs <component id=\"root\"> holding <component id=\"system\">"]
    sp = _params(sysel)

    t = _number(sp.get("temperature"))
    if t is None or not (TEMPERATURE_MIN_K <= t <= TEMPERATURE_MAX_K) or t % TEMPERATURE_STEP_K != 0:
        problems.append(f"system.temperature={sp.get('temperature')!r}: must be a multiple of "
                        f"{TEMPERATURE_STEP_K} K in {TEMPERATURE_MIN_K}-{TEMPERATURE_MAX_K}")
    node = _number(sp.get("core_tech_node"))
    if node is None or not (NODE_RANGE_NM[0] <= node <= NODE_RANGE_NM[1]):
        problems.append(f"system.core_tech_node={sp.get('core_tech_node')!r}: must be in "
                        f"{NODE_RANGE_NM[0]:g}-{NODE_RANGE_NM[1]:g} nm")
    if sp.get("device_type") not in ("0", "1", "2"):
        problems.append(f"system.device_type={sp.get('device_type')!r}: must be 0 (HP), 1 (LSTP) or 2 (LOP)")
    n_cores = _number(sp.get("number_of_cores"))
    if n_cores is None or n_cores < 1 or n_cores != int(n_cores):
        problems.append(f"system.number_of_cores={sp.get('number_of_cores')!r}: must be an integer >= 1")
    clock = _number(sp.get("target_core_clockrate"))
    if clock is None or clock <= 0:
        problems.append(f"system.target_core_clockrate={sp.get('target_core_clockrate')!r}: must be > 0 MHz")

    n_core_comps = 1 if sp.get("homogeneous_cores", "1") == "1" else int(n_cores or 1)
    for i in range(n_core_comps):
        cid = f"system.core{i}"
        core = comps.get(cid)
        if core is None:
            problems.append(f"{cid} is missing")
            continue
        cp = _params(core)
        if _number(cp.get("prediction_width")) is None:
            problems.append(f"{cid}.prediction_width is missing (McPAT then drops the branch predictor and BTB)")
        ras, va = _number(cp.get("RAS_size")), _number(sp.get("virtual_address_width"))
        if ras is not None and va and ras < cacti_min_entries(int(va)):
            problems.append(f"{cid}.RAS_size={ras:g}: below CACTI's smallest array of {va:g}-bit addresses "
                            f"({cacti_min_entries(int(va))} entries)")
        c = _number(cp.get("clock_rate"))
        if c is None or c <= 0:
            problems.append(f"{cid}.clock_rate={cp.get('clock_rate')!r}: must be > 0 MHz")
        for kid in ("predictor", "BTB", "icache", "dcache", "itlb", "dtlb"):
            if f"{cid}.{kid}" not in comps:
                problems.append(f"{cid}.{kid} is missing")

    for cid, el in comps.items():
        p = _params(el)
        for name in CACHE_CONFIGS:
            if name not in p:
                continue
            v = _numbers(p[name])
            if v is None or len(v) < 3:
                problems.append(f"{cid}.{name}={p[name]!r}: needs capacity,block,associativity,...")
                continue
            cap, block, assoc = v[0], v[1], v[2]
            if assoc != int(assoc) or not is_power_of_two(int(assoc)):
                problems.append(f"{cid}.{name}: associativity {assoc:g} is not a power of two")
            elif cap < cacti_min_capacity_B(int(block), int(assoc), int(v[3]) if len(v) > 3 and v[3] >= 1 else 1):
                problems.append(f"{cid}.{name}: capacity {cap:g} B is below CACTI's smallest array (16 sets of "
                                f"{block:g} x {assoc:g} B, {CACTI_MIN_BANK_B} B a bank)")
        if "Dir_config" in p:
            v = _numbers(p["Dir_config"])
            if v is None or len(v) < 3:
                problems.append(f"{cid}.Dir_config={p['Dir_config']!r}: needs capacity,block,associativity,...")
                continue
            assoc = v[2]
            if p.get("Directory_type", "0") == "0":
                if assoc != 0:
                    problems.append(f"{cid}.Dir_config: a CAM directory (Directory_type 0) has associativity 0, "
                                    f"not {assoc:g}")
            elif assoc != int(assoc) or not is_power_of_two(int(assoc)):
                problems.append(f"{cid}.Dir_config: associativity {assoc:g} is not a power of two")
            if v[0] < cacti_min_capacity_B(int(v[1]), int(assoc) if p.get("Directory_type", "0") != "0" else 0):
                problems.append(f"{cid}.Dir_config: capacity {v[0]:g} B is below CACTI's smallest array")
        for clk in ("clockrate", "mc_clock"):
            if clk in p and cid != "system.flashc":
                c = _number(p[clk])
                if c is None or c <= 0:
                    problems.append(f"{cid}.{clk}={p[clk]!r}: must be > 0 MHz")
    return problems
