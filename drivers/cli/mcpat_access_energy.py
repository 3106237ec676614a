"""McPAT's energy per counted event of one unit beside this model's, from a run's socket or a McPAT input
(power/access_energy.py): each ``--vary COMPONENT:STAT`` raises that statistic by ``--delta`` alone and McPAT runs
again (``../shared/tools/mcpat``, ``--mcpat PATH`` or $KVSIM_MCPAT; printouts cached by content).

    sim-scripts/mcpat_access_energy.py --run RUN_DIR --line "Data Cache" \\
        --vary system.core0.dcache:read_accesses --vary system.core0.dcache:write_misses
    sim-scripts/mcpat_access_energy.py --xml socket.xml --line "Instruction Cache" \\
        --vary system.core0.icache:read_accesses

A run's socket is exported as ``kvsim run --mcpat`` exports it (its own counters; homogeneous cores as McPAT needs
them with a private L2). McPAT is not part of kvsim: it is used only when given or found beside the project.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import warnings

from rich.console import Console
from rich.table import Table


def _socket_xml(run_dir: str, socket: int) -> str:
    import power
    from power import mcpat_xml

    from .mcpat_run import mcpat_activity

    d = pathlib.Path(run_dir)
    r = power.price_run(json.loads((d / "stats.json").read_text()), json.loads((d / "config.json").read_text()))
    sockets = getattr(r, "sockets", None) or [r]
    if not 0 <= socket < len(sockets):
        raise SystemExit(f"{run_dir}: socket {socket} out of range (the run has {len(sockets)})")
    s = sockets[socket]
    activity, _ = mcpat_activity(s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mcpat_xml.to_xml(s.model.platform, activity)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--run", metavar="RUN_DIR", help="a finished run (stats.json, config.json)")
    src.add_argument("--xml", metavar="PATH", help="a McPAT input")
    ap.add_argument("--socket", type=int, default=0, help="with --run: the socket (default 0)")
    ap.add_argument("--line", required=True, help='McPAT\'s line whose runtime is compared, e.g. "Data Cache"')
    ap.add_argument("--vary", action="append", required=True, metavar="COMPONENT:STAT",
                    help="a statistic to raise alone (repeatable), e.g. system.core0.dcache:read_accesses")
    ap.add_argument("--delta", type=float, default=1e6, help="how much each is raised (default 1e6)")
    ap.add_argument("--mcpat", metavar="PATH", help="the McPAT binary (default ../shared/tools/mcpat/mcpat)")
    args = ap.parse_args(argv)

    from power import access_energy as ae
    from power import mcpat_check, mcpat_tree

    if args.delta <= 0:
        raise SystemExit("--delta must be positive")
    variations = [ae.parse_variation(v, args.delta) for v in args.vary]
    xml = _socket_xml(args.run, args.socket) if args.run else pathlib.Path(args.xml).read_text()
    edited = [ae.raised(xml, v) for v in variations]          # every edit checked before McPAT runs
    binary = pathlib.Path(args.mcpat) if args.mcpat else mcpat_check.mcpat_binary()
    if binary is None:
        raise SystemExit("McPAT not found: give --mcpat PATH or set $KVSIM_MCPAT")
    secs = ae.seconds(xml)

    def both(text):
        return (ae.line_runtime_W(mcpat_tree.parse_out(mcpat_check.run_mcpat(text, binary)), args.line),
                ae.line_runtime_W(ae.model_tree(text), args.line))

    base = both(xml)
    t = Table(title=f"{args.line}: energy per event (runtime dynamic {base[0]:.4g} W in McPAT, {base[1]:.4g} W "
                    f"here, over {secs * 1e3:.4g} ms)")
    for c in ("raised", "McPAT nJ", "kvsim nJ", "kvsim / McPAT"):
        t.add_column(c, justify="left" if c == "raised" else "right")
    for v, text in zip(variations, edited):
        m, k = both(text)
        em = ae.energy_per_event_nJ(base[0], m, secs, v.delta)
        ek = ae.energy_per_event_nJ(base[1], k, secs, v.delta)
        t.add_row(f"{v.component}:{v.stat} +{v.delta:g}", f"{em:.4g}", f"{ek:.4g}",
                  f"{ek / em:.3g}" if em else "-")
    Console(width=160).print(t)
    return 0
