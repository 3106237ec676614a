"""What the per-request line reports of a saved Xeon run share (drivers/cli/xeon_read_lines.py, where its DRAM reads
come from, and drivers/cli/xeon_write_lines.py, where its writes come from): reading a point validate_xeon.py --save
kept, sums of a counter over the run's sockets or cores (a counter none reports is an error, not a zero), the DDIO
counters, the published figure per request in lines, the report's header and the command line over several points.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
from typing import Callable

from drivers.cli.validate_xeon import LINE_BYTES, PUBLISHED

CORE = re.compile(r"^system\.socket\d+\.core\d+\.")
SOCKET = re.compile(r"^system\.socket(\d+)\.")


def counter_sum(s: dict[str, float], pattern: re.Pattern, suffix: str) -> float:
    """The counter `suffix` summed over every key `pattern` matches at its start (a core's or a socket's own, not a
    sub-object's: nothing between the match and the suffix); a counter none reports is an error, not a zero."""
    vals = [v for k, v in s.items() if k.endswith("." + suffix) and (m := pattern.match(k)) and k[m.end():] == suffix]
    if not vals:
        where = "core" if pattern is CORE else "socket"
        raise KeyError(f"no {where} of the run reports {suffix!r}: a missing counter is an error, not a zero")
    return sum(vals)


def channel_sum(s: dict[str, float], counter: str) -> float:
    """Lines the memory channels of every socket moved: `counter` is 'reads' or 'writes'."""
    vals = [v for k, v in s.items() if re.match(rf"^system\.socket\d+\.mem\.channel\d+\.{counter}$", k)]
    if not vals:
        raise KeyError(f"no memory channel of the run reports {counter!r}")
    return sum(vals)


def ddio(s: dict[str, float], name: str) -> float:
    """A DDIO counter of every socket, or of the system where the sockets share one memory system."""
    if any(re.match(rf"^system\.socket\d+\.ddio\.{name}$", k) for k in s):
        return counter_sum(s, SOCKET, f"ddio.{name}")
    return s[f"system.ddio.{name}"]


def sockets(s: dict[str, float]) -> int:
    """How many sockets the run's statistics describe."""
    return len({m.group(1) for k in s if (m := SOCKET.match(k))})


def cores(s: dict[str, float]) -> int:
    """How many cores the run's statistics describe (every socket's)."""
    return len({m.group(0) for k in s if (m := CORE.match(k))})


def published_lines(cores: int, figure: str) -> float | None:
    """A published memory figure (validate_xeon.py's `figure`: 'mem_read_gbs' or 'mem_write_gbs') a request, in
    lines, where one is published for `cores` cores (derived from it and the throughput, not published as such)."""
    pub = PUBLISHED.get(cores, {})
    if figure not in pub:
        return None
    return pub[figure] * 1e9 / (pub["throughput_mrps"] * 1e6) / LINE_BYTES


def load_point(folder: pathlib.Path) -> tuple[dict[str, float], dict | None]:
    """A saved point's statistics (stats.json) and configuration (config.json; None when it was not kept)."""
    stats_file = folder / "stats.json"
    if not stats_file.is_file():
        raise SystemExit(f"{folder}: no stats.json in it (a point validate_xeon.py --save kept)")
    config_file = folder / "config.json"
    config = json.loads(config_file.read_text()) if config_file.is_file() else None
    return json.loads(stats_file.read_text()), config


def header(folder: pathlib.Path, s: dict[str, float]) -> list[str]:
    """A report's first lines: the point, its size and throughput, and the columns' heads."""
    return [f"== {folder}: {cores(s)} core(s), {int(s['client.items']):,} items, {int(s['client.requests']):,} "
            f"measured requests, {s['client.throughput_mrps']:.3f} M req/s",
            f"   {'per measured request':<48}{'lines':>9}{'bytes':>9}"]


def main(report: Callable[[pathlib.Path], str], description: str, argv: list[str] | None = None) -> int:
    """The command line of a report over saved points: each DIR's report printed in turn."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", metavar="DIR", help="saved points (validate_xeon.py --save DIR/<cores>)")
    opts = parser.parse_args(argv)
    for folder in opts.folders:
        print(report(pathlib.Path(folder)))
    return 0
