"""Results: per structure, per component class and in total, as a pandas DataFrame and as flat stats."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .classes import OFF_DIE_CLASSES, ON_DIE_CLASSES

COLUMNS = ["area_mm2", "peak_dynamic_W", "runtime_dynamic_W", "subthreshold_leakage_W", "gate_leakage_W"]


class DieFigures:
    """The die's headline figures, read from its totals (`die`): one socket's or every socket's summed."""

    die: pd.Series

    @property
    def area_mm2(self) -> float:
        return float(self.die.area_mm2)

    @property
    def peak_dynamic_W(self) -> float:
        return float(self.die.peak_dynamic_W)

    @property
    def leakage_W(self) -> float:
        return float(self.die.leakage_W)

    @property
    def peak_power_W(self) -> float:
        return float(self.die.peak_power_W)

    @property
    def runtime_power_W(self) -> float:
        return float(self.die.runtime_power_W)


class Result(DieFigures):
    """Power and area of one socket at one operating point."""

    def __init__(self, model, *, area, peak, runtime, sub, gate, core_vdd, core_MHz, uncore_vdd, temperature_K,
                 clock=None, label=""):
        self.model = model
        self.label = label
        self.core_vdd = core_vdd
        self.core_MHz = core_MHz
        self.uncore_vdd = uncore_vdd
        self.temperature_K = temperature_K
        s = model.structs
        self.structures = pd.DataFrame({
            "component": [x.path for x in s],
            "class": [x.cls for x in s],
            "on_die": [x.on_die for x in s],
            "area_mm2": area,
            "peak_dynamic_W": peak,
            "runtime_dynamic_W": runtime,
            "subthreshold_leakage_W": sub,
            "gate_leakage_W": gate,
            # runtime dynamic power of the structure when clocked with no counted events (0 without activity)
            "clock_W": np.zeros(len(s)) if clock is None else clock,
        })
        self.structures["leakage_W"] = self.structures.subthreshold_leakage_W + self.structures.gate_leakage_W
        self.structures["peak_power_W"] = self.structures.peak_dynamic_W + self.structures.leakage_W
        self.structures["runtime_power_W"] = self.structures.runtime_dynamic_W + self.structures.leakage_W

    # ------------------------------------------------------------------ aggregates
    def by_class(self) -> pd.DataFrame:
        g = self.structures.groupby("class", sort=False)[COLUMNS + ["leakage_W", "peak_power_W",
                                                                   "runtime_power_W"]].sum()
        order = [c for c in ON_DIE_CLASSES + OFF_DIE_CLASSES if c in g.index]
        return g.loc[order]

    def _total(self, on_die: bool | None) -> pd.Series:
        df = self.structures
        if on_die is not None:
            df = df[df.on_die == on_die]
        return df[COLUMNS + ["leakage_W", "peak_power_W", "runtime_power_W"]].sum()

    @property
    def die(self) -> pd.Series:
        """Totals over the die (the McPAT 'Processor' figures)."""
        return self._total(True)

    @property
    def socket(self) -> pd.Series:
        """Totals including off-die parts (DRAM devices, NICs)."""
        return self._total(None)


    @property
    def warnings(self) -> list[str]:
        act = self.model.activity
        return list(act.missing) if act is not None else []

    def energy_per_request_J(self, include_off_die: bool = True) -> float:
        act = self.model.activity
        if act is None or act.requests <= 0:
            return float("nan")
        tot = self.socket if include_off_die else self.die
        return float(tot.runtime_power_W) * act.seconds / act.requests

    def requests_per_s_per_W(self, include_off_die: bool = True) -> float:
        e = self.energy_per_request_J(include_off_die)
        return float("nan") if not e > 0 else 1.0 / e

    def dataframe(self) -> pd.DataFrame:
        """One row per component class, then 'die' and 'socket' totals; energy per request in the totals."""
        df = self.by_class().reset_index().rename(columns={"class": "component"})
        die = self.die.to_frame().T.assign(component="die")
        sock = self.socket.to_frame().T.assign(component="socket")
        out = pd.concat([df, die, sock], ignore_index=True)
        epr = self.energy_per_request_J(True)
        out["energy_per_request_J"] = np.where(out.component == "socket", epr, np.nan)
        out.loc[out.component == "die", "energy_per_request_J"] = self.energy_per_request_J(False)
        out["requests_per_s_per_W"] = 1.0 / out["energy_per_request_J"]
        out.attrs["warnings"] = self.warnings
        out.attrs["label"] = self.label
        return out

    def stats(self, prefix: str = "power") -> dict[str, float]:
        """Flat stats to merge into a run's stats: ``power.cores.runtime_dynamic_W``, ``power.die.area_mm2``..."""
        out: dict[str, float] = {}
        cols = COLUMNS + ["leakage_W", "peak_power_W", "runtime_power_W"]
        for cls, row in self.by_class().iterrows():
            for c in cols:
                out[f"{prefix}.{cls}.{c}"] = float(row[c])
        for name, tot in (("die", self.die), ("socket", self.socket)):
            for c in cols:
                out[f"{prefix}.{name}.{c}"] = float(tot[c])
        out[f"{prefix}.energy_per_request_J"] = self.energy_per_request_J(True)
        out[f"{prefix}.requests_per_s_per_W"] = self.requests_per_s_per_W(True)
        out[f"{prefix}.core_vdd_mean_V"] = float(np.mean(self.core_vdd))
        out[f"{prefix}.core_MHz_mean"] = float(np.mean(self.core_MHz))
        out[f"{prefix}.warnings.missing_stats"] = float(len(self.warnings))
        return out


class SystemResult(DieFigures):
    """Power of a multi-socket run: every socket's ``Result`` (each at its cores' own V and f) and the
    inter-socket links (``power.links.LinkPower``). Totals: ``die`` sums the sockets' dies, ``system`` adds the
    off-die parts (DRAM devices, NIC chips) and the links."""

    def __init__(self, sockets: list[Result], links):
        self.sockets = sockets
        self.links = links

    def _sum(self, attr: str) -> pd.Series:
        return sum((getattr(r, attr) for r in self.sockets[1:]), getattr(self.sockets[0], attr).copy())

    @property
    def die(self) -> pd.Series:
        return self._sum("die")

    @property
    def system(self) -> pd.Series:
        tot = self._sum("socket")
        for c in ("runtime_dynamic_W", "runtime_power_W", "peak_dynamic_W", "peak_power_W"):
            tot[c] += self.links.power_W       # always on: the same at peak and at runtime (power/links.py)
        return tot


    @property
    def warnings(self) -> list[str]:
        return [w for r in self.sockets for w in r.warnings]

    def energy_per_request_J(self) -> float:
        act = self.sockets[0].model.activity
        if act is None or act.requests <= 0:
            return float("nan")
        return float(self.system.runtime_power_W) * act.seconds / act.requests

    def requests_per_s_per_W(self) -> float:
        e = self.energy_per_request_J()
        return float("nan") if not e > 0 else 1.0 / e

    def dataframe(self) -> pd.DataFrame:
        """Each socket's rows (component prefixed ``socket{k}.``), the links, then 'die' and 'system' totals."""
        parts = []
        for k, r in enumerate(self.sockets):
            df = r.dataframe()
            df["component"] = f"socket{k}." + df["component"]
            parts.append(df)
        links = pd.Series(0.0, index=COLUMNS + ["leakage_W", "peak_power_W", "runtime_power_W"])
        for c in ("peak_dynamic_W", "runtime_dynamic_W", "peak_power_W", "runtime_power_W"):
            links[c] = self.links.power_W
        rows = [links.to_frame().T.assign(component="links"), self.die.to_frame().T.assign(component="die"),
                self.system.to_frame().T.assign(component="system")]
        out = pd.concat(parts + rows, ignore_index=True)
        out.loc[out.component == "system", "energy_per_request_J"] = self.energy_per_request_J()
        out.attrs["warnings"] = self.warnings
        return out

    def stats(self, prefix: str = "power") -> dict[str, float]:
        """Every socket's stats under ``power.socket{k}.``, the links under ``power.links.``, totals under
        ``power.die.`` and ``power.system.``."""
        out: dict[str, float] = {}
        for k, r in enumerate(self.sockets):
            out.update(r.stats(f"{prefix}.socket{k}"))
        cols = COLUMNS + ["leakage_W", "peak_power_W", "runtime_power_W"]
        for name, tot in (("die", self.die), ("system", self.system)):
            for c in cols:
                out[f"{prefix}.{name}.{c}"] = float(tot[c])
        out[f"{prefix}.links.count"] = float(self.links.count)
        out[f"{prefix}.links.power_W"] = self.links.power_W
        out[f"{prefix}.links.assumed_shape"] = float(self.links.assumed_shape)
        out[f"{prefix}.links.utilization"] = self.links.utilization
        out[f"{prefix}.energy_per_request_J"] = self.energy_per_request_J()
        out[f"{prefix}.requests_per_s_per_W"] = self.requests_per_s_per_W()
        out[f"{prefix}.warnings.missing_stats"] = float(len(self.warnings))
        return out
