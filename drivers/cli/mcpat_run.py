"""Real McPAT on a finished run, beside kvsim's power model (`kvsim run --mcpat PATH`, or $KVSIM_MCPAT).

The run's priced model (power.price_run: the run's own configuration and counters) is written as McPAT's XML
input (power/mcpat_xml.py), one file per socket, and McPAT runs on it with `-print_level 5`. The run folder gets
`mcpat/socket{k}.xml`, McPAT's printout `socket{k}.out`, the two trees line by line with their errors
`socket{k}_tree.csv` (power/mcpat_tree.py) and `totals.json` (the processor's area, peak dynamic, leakage and
runtime dynamic power: McPAT's and the model's). McPAT is not part of kvsim: it is used only when given.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import subprocess
import warnings
from typing import Any

from power import mcpat_tree, mcpat_xml
from power.mcpat_rules import McpatExportWarning

ENV = "KVSIM_MCPAT"
# McPAT takes 4-25 s and about 1 GB per configuration (tools/mcpat README); a hung one is stopped.
TIMEOUT_S = 900


class McpatFailed(RuntimeError):
    """McPAT exited with an error, or printed no `Processor:` section (an input CACTI cannot build)."""


def mcpat_path(given: str | None) -> str | None:
    """The McPAT binary to use: the option's, else $KVSIM_MCPAT's, else None (do not run McPAT)."""
    path = given or os.environ.get(ENV) or None
    if path is not None and not os.access(path, os.X_OK):
        raise FileNotFoundError(f"McPAT binary {path!r} (--mcpat or ${ENV}) is not an executable file")
    return path


def mcpat_activity(result):
    """The activity McPAT is given. McPAT 1.3 refuses cores that differ (per-core activity) when the L2 is private
    ("Number of private L2 does not match number of cores": the export writes one L2 type for them); such a run
    is given as homogeneous cores, each the mean core, which keeps every chip total McPAT prices. Returns
    (activity, note)."""
    activity = result.model.activity
    cores = activity.cores
    if result.model.platform.core.l2 is None or len(cores) <= 1 or all(c == cores[0] for c in cores):
        return activity, "per-core activity as priced"
    mean = mcpat_xml.per_core_share(mcpat_xml.chip_total(cores, len(cores)), len(cores))
    return dataclasses.replace(activity, cores=[mean]), ("cores written as homogeneous (the mean core, same chip "
                                                         "totals): McPAT 1.3 refuses differing cores with a "
                                                         "private L2")


def _processor(tree) -> dict[str, float]:
    row = tree[tree.line == "Processor"]
    if row.empty:
        raise McpatFailed("no Processor line in the tree")
    return {m: float(row.iloc[0][m]) for m in mcpat_tree.METRICS}


def run(priced, outdir: pathlib.Path, mcpat: str) -> dict[str, Any]:
    """Run McPAT on every socket of the priced run and write its outputs under outdir/mcpat/. Returns
    {socket{k}: {"mcpat": totals, "model": totals}} and writes the same as totals.json."""
    folder = pathlib.Path(outdir) / "mcpat"
    folder.mkdir(parents=True, exist_ok=True)
    sockets = getattr(priced, "sockets", None) or [priced]
    totals: dict[str, Any] = {}
    for k, result in enumerate(sockets):
        activity, note = mcpat_activity(result)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", McpatExportWarning)
            xml = mcpat_xml.write(folder / f"socket{k}.xml", result.model.platform, activity)
        rounded = [str(w.message) for w in caught if issubclass(w.category, McpatExportWarning)]
        proc = subprocess.run([mcpat, "-infile", str(xml), "-print_level", "5"], capture_output=True, text=True,
                              timeout=TIMEOUT_S)
        (folder / f"socket{k}.out").write_text(proc.stdout)
        if proc.returncode != 0 or "Processor:" not in proc.stdout:
            raise McpatFailed(f"McPAT on {xml} gave exit status {proc.returncode} and "
                              f"{'no' if 'Processor:' not in proc.stdout else 'a'} Processor section: "
                              f"{proc.stderr.strip()[-300:]}")
        mcpat_tree.compare(result, proc.stdout).to_csv(folder / f"socket{k}_tree.csv", index=False)
        totals[f"socket{k}"] = {"mcpat": _processor(mcpat_tree.parse_out(proc.stdout)),
                                "model": _processor(mcpat_tree.tree(result)), "note": note,
                                "export_warnings": rounded}
    (folder / "totals.json").write_text(json.dumps({"mcpat": mcpat, **totals}, indent=2) + "\n")
    return totals


def stats(totals: dict[str, Any]) -> dict[str, float]:
    """McPAT's totals as flat statistics (`mcpat.socket0.runtime_dynamic_W`, ...)."""
    return {f"mcpat.{socket}.{metric}": value for socket, both in totals.items()
            for metric, value in both["mcpat"].items()}
