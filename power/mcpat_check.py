"""Every configuration the project ships, exported to McPAT's format and checked against McPAT 1.3 itself,
component by component: cores and their units, shared caches, directories, the NoC with its routers and their
parts, memory controllers with theirs, NIU and PCIe (``power.mcpat_tree``).

McPAT is a development oracle, not a dependency: ``mcpat_binary()`` finds it beside the project
(``../shared/tools/mcpat/mcpat``) or at ``$KVSIM_MCPAT``, and nothing else here needs it. A run takes 4-90 s and
about 1 GB, so its printout is cached by the input's content (``$KVSIM_MCPAT_CACHE`` or the system's temporary
directory); kvsim's own parameters (``kvsim_*``, which McPAT skips) are left out of the key, so the sockets of a
multi-socket server, which differ only in their names, share one run.

Our side prices the exported XML as read back (``power.mcpat_xml.read``), i.e. exactly the input McPAT priced, with
McPAT's convention that every NIU of the input is on the die (kvsim's PCIe-attached NICs are off die).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import subprocess
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import mcpat_tree
from .mcpat_xml import read, to_xml

MCPAT = Path(__file__).resolve().parents[2] / "shared" / "tools" / "mcpat" / "mcpat"
# the metrics compared: McPAT's input carries no activity here, so runtime dynamic power is not (our runtime with
# zero counts is the clock power, McPAT's its own idle figure)
METRICS = ("area_mm2", "peak_dynamic_W", "leakage_W")
TOLERANCE_PCT = 10.0


class McpatRunError(RuntimeError):
    """McPAT did not price the input (no ``Processor:`` section, a non-zero exit, or a timeout)."""


@dataclass(frozen=True)
class Export:
    config: str            # module under configs/
    socket: int
    name: str              # the platform's name
    xml: str


def mcpat_binary() -> Path | None:
    """McPAT's binary, or None where it is absent (a user's machine has no ../shared)."""
    p = Path(os.environ.get("KVSIM_MCPAT", MCPAT))
    return p if p.is_file() and os.access(p, os.X_OK) else None


def config_names() -> list[str]:
    import configs
    return configs.available()


def exports(names: list[str] | None = None) -> list[Export]:
    """Every socket of every named config (default: all of ``configs/``), exported as McPAT accepts it (rounded
    associativities and temperature, with the warnings silenced: ``power.mcpat_rules`` lists them)."""
    from .from_config import platforms_from_config
    out = []
    for name in names or config_names():
        system = importlib.import_module(f"configs.{name}").system()
        for k, p in enumerate(platforms_from_config(system.to_dict())):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(Export(name, k, p.name, to_xml(p)))
    return out


def _key(xml: str) -> str:
    mcpat_sees = "\n".join(line for line in xml.splitlines() if 'name="kvsim_' not in line)
    return hashlib.sha256(mcpat_sees.encode()).hexdigest()[:20]


def cache_dir() -> Path:
    d = Path(os.environ.get("KVSIM_MCPAT_CACHE", Path(tempfile.gettempdir()) / "kvsim-mcpat"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def run_mcpat(xml: str, binary: Path | None = None, timeout_s: float = 900.0) -> str:
    """McPAT's ``-print_level 5`` printout for ``xml`` (cached by content)."""
    out = cache_dir() / f"{_key(xml)}.out"
    if out.is_file():
        return out.read_text()
    binary = binary or mcpat_binary()
    if binary is None:
        raise McpatRunError(f"McPAT not found at {MCPAT} (or $KVSIM_MCPAT)")
    with tempfile.TemporaryDirectory() as tmp:
        infile = Path(tmp) / "input.xml"
        infile.write_text(xml)
        try:
            r = subprocess.run([str(binary), "-infile", str(infile), "-print_level", "5"], capture_output=True,
                               text=True, timeout=timeout_s, cwd=tmp)
        except subprocess.TimeoutExpired as e:
            raise McpatRunError(f"McPAT took more than {timeout_s:g} s") from e
    if r.returncode != 0 or "Processor:" not in r.stdout:
        raise McpatRunError(f"McPAT exit status {r.returncode} without a Processor section: "
                            f"{(r.stdout + r.stderr)[-400:]}")
    tmp_out = out.with_suffix(".tmp")
    tmp_out.write_text(r.stdout)
    tmp_out.replace(out)
    return r.stdout


def compare_export(xml: str, mcpat_out: str) -> pd.DataFrame:
    """Our figures for the exported input beside McPAT's printout, line by line (``mcpat_tree.compare`` with NIUs
    on the die), with total leakage (subthreshold + gate) added."""
    from . import build
    p, a = read(xml)
    c = mcpat_tree.compare(build(p, a).evaluate(), mcpat_out, niu_on_die=True)
    for side in ("kvsim", "mcpat"):
        c[f"{side}_leakage_W"] = c[f"{side}_subthreshold_leakage_W"] + c[f"{side}_gate_leakage_W"]
    c["error_leakage_W_pct"] = 100.0 * (c.kvsim_leakage_W / c.mcpat_leakage_W - 1.0)
    return c


def check(names: list[str] | None = None, binary: Path | None = None) -> pd.DataFrame:
    """Every export against McPAT: one row per (config, socket, line) with ours, McPAT's and the % error per
    metric of ``METRICS``; lines only one side prints are dropped."""
    frames = []
    for e in exports(names):
        c = compare_export(e.xml, run_mcpat(e.xml, binary))
        keep = c[[f"mcpat_{m}" for m in METRICS]].notna().any(axis=1) & c[[f"kvsim_{m}" for m in METRICS]].notna().any(axis=1)
        c = c[keep].assign(config=e.config, socket=e.socket, platform=e.name)
        frames.append(c)
    return pd.concat(frames, ignore_index=True)


def worst(table: pd.DataFrame, n: int = 20) -> pd.DataFrame:
    """The ``n`` (config, line, metric) with the largest |error| (first socket of each config)."""
    t = table[table.socket == 0]
    rows = []
    for m in METRICS:
        e = t[["config", "line", f"kvsim_{m}", f"mcpat_{m}", f"error_{m}_pct"]].dropna()
        e = e.rename(columns={f"kvsim_{m}": "kvsim", f"mcpat_{m}": "mcpat", f"error_{m}_pct": "error_pct"})
        rows.append(e.assign(metric=m))
    w = pd.concat(rows, ignore_index=True)
    return w.reindex(w.error_pct.abs().sort_values(ascending=False).index).head(n)


def within(table: pd.DataFrame, tolerance_pct: float = TOLERANCE_PCT) -> pd.DataFrame:
    """Per config (first socket): how many compared (line, metric) pairs are within ``tolerance_pct``."""
    rows = []
    for cfg, g in table[table.socket == 0].groupby("config", sort=False):
        errs = pd.concat([g[f"error_{m}_pct"] for m in METRICS]).dropna().abs()
        proc = g[g.line == "Processor"].iloc[0]
        rows.append(dict(config=cfg, pairs=len(errs), within=int((errs <= tolerance_pct).sum()),
                         **{f"processor_{m}_pct": float(proc[f"error_{m}_pct"]) for m in METRICS}))
    return pd.DataFrame(rows)
