"""The peer suite: well-known open-source programs (workloads/peer/build.sh fetches their Debian sources and builds
them with plain `riscv64-linux-gnu-gcc -static -O2`) run under kvsim, functional and detailed, and under
qemu-riscv64 with the same input files. stdout, stderr, the exit status and every file a program writes must be
the same.

    sim-scripts/peer.py                 build what is missing, run every program, print the table
    sim-scripts/peer.py lua sqlite3     only these programs
    sim-scripts/peer.py --strace        list the Linux calls each program makes under qemu-riscv64 (-strace)

Every program sees the same tree: its inputs read-only under `in/`, a writable `out/` (under qemu: a temporary
folder; under kvsim: Workload.files and the in-memory scratch directory), the working directory at the top, which
is also HOME (SQLite's shell looks there for its start-up file). The environment is otherwise empty."""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import math
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
PEER = ROOT / "workloads" / "peer"
BUILD_SCRIPT = PEER / "build.sh"
BIN = PEER / "build" / "bin"
QEMU = "qemu-riscv64"
# The guest's working directory holds in/ (read-only inputs) and out/ (what the program writes).
GUEST_CWD = "/peer"
MAX_INSTS = 2_000_000_000


@dataclasses.dataclass(frozen=True)
class Peer:
    """One program of the suite and how it is run. `name` is its binary in workloads/peer/build/bin."""

    name: str
    kind: str
    args: tuple[str, ...]
    stdin: str | None = None  # an input file (under in/) given as standard input
    harts: int = 1
    cheap: bool = True  # builds in seconds: part of `make test`'s subset


PEERS = [
    Peer("lua", "interpreter running a script file", ("in/wordfreq.lua", "in/corpus.txt", "out/freq.txt")),
    Peer("minigzip", "compressor (zlib), to stdout", ("-c", "in/corpus.txt")),
    Peer("bzip2", "compressor, to stdout", ("-c", "-9", "in/corpus.txt")),
    Peer("lz4", "compressor, file to file", ("-9", "in/corpus.txt", "out/corpus.lz4")),
    Peer("pcre2grep", "regular expressions", ("-n", "-i", "-o", r"\b(s[a-z]+a|[a-z]+ing)\b", "in/corpus.txt")),
    Peer("jq", "JSON processor", ("-S", "-f", "in/select.jq", "in/orders.json")),
    Peer("fftutil", "numerical kernel (kissfft)", ("-n", "1024", "-R", "in/signal.f32", "out/spectrum.f32")),
    Peer("zstd", "threaded compressor (2 workers)", ("-q", "-T2", "-9", "in/corpus.txt", "-o", "out/corpus.zst"),
         harts=4, cheap=False),
    Peer("sqlite3", "database engine on a file", ("out/orders.db",), stdin="in/orders.sql", cheap=False),
]
BY_NAME = {p.name: p for p in PEERS}


# --- inputs --------------------------------------------------------------------------------------------------------

def _lcg(seed: int):
    state = seed
    while True:
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        yield state >> 33


def make_corpus(nbytes: int = 32 * 1024) -> bytes:
    """Deterministic English-like text: words from a fixed syllable set, Zipf-like reuse of earlier words."""
    rand = _lcg(31)
    syllables = ["ka", "lo", "mi", "ra", "sen", "ta", "vo", "ing", "el", "dor", "ne", "sa", "qu", "in", "ar", "ba"]
    vocab = ["".join(syllables[next(rand) % len(syllables)] for _ in range(1 + next(rand) % 3)) for _ in range(400)]
    lines, size = [], 0
    while size < nbytes:
        words = [vocab[min(next(rand) % 400, next(rand) % 400)] for _ in range(6 + next(rand) % 9)]
        line = " ".join(words).capitalize() + "."
        lines.append(line)
        size += len(line) + 1
    return ("\n".join(lines) + "\n").encode()


def make_orders_json() -> bytes:
    rand = _lcg(7)
    orders = [{"id": i, "customer": f"c{next(rand) % 40}", "amount": (next(rand) % 10000) / 100,
               "tags": [["red", "blue", "green", "gold"][next(rand) % 4] for _ in range(next(rand) % 3)]}
              for i in range(400)]
    return json.dumps({"orders": orders}, indent=1).encode()


def make_signal(n: int = 1024 * 8) -> bytes:
    """Float32 samples: two tones and a ramp, for eight real FFTs of 1024 points."""
    samples = [math.sin(2 * math.pi * 50 * i / 1024) + 0.5 * math.cos(2 * math.pi * 123 * i / 1024) + i / n
               for i in range(n)]
    return struct.pack(f"<{n}f", *samples)


def make_inputs(folder: pathlib.Path) -> pathlib.Path:
    """Write the suite's input set into `folder`/in and make an empty `folder`/out; returns `folder`."""
    inputs = folder / "in"
    inputs.mkdir(parents=True, exist_ok=True)
    (folder / "out").mkdir(exist_ok=True)
    for f in (PEER / "inputs").iterdir():
        shutil.copyfile(f, inputs / f.name)
    (inputs / "corpus.txt").write_bytes(make_corpus())
    (inputs / "orders.json").write_bytes(make_orders_json())
    (inputs / "signal.f32").write_bytes(make_signal())
    return folder


# --- runs ----------------------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Outcome:
    stdout: bytes
    stderr: bytes
    exit_code: int
    files: dict[str, bytes]  # what the program wrote under out/, by path relative to out/
    insts: int = 0
    seconds: float = 0.0
    stop_reason: str = "exit"


def files_under(folder: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def run_qemu(peer: Peer, *, strace: bool = False, timeout: float = 600) -> Outcome:
    with tempfile.TemporaryDirectory(prefix=f"peer-{peer.name}-") as tmp:
        work = make_inputs(pathlib.Path(tmp))
        stdin = open(work / peer.stdin, "rb") if peer.stdin else subprocess.DEVNULL
        start = time.perf_counter()
        try:
            proc = subprocess.run([QEMU, *(["-strace"] if strace else []), str(BIN / peer.name), *peer.args],
                                  cwd=work, stdin=stdin, capture_output=True, timeout=timeout,
                                  env={"HOME": str(work)})
        finally:
            if peer.stdin:
                stdin.close()
        return Outcome(proc.stdout, proc.stderr, proc.returncode, files_under(work / "out"),
                       seconds=time.perf_counter() - start)


def run_kvsim(peer: Peer, mode: str, **params) -> Outcome:
    from models.sim import simulate
    from models.system import System, Workload

    with tempfile.TemporaryDirectory(prefix=f"peer-{peer.name}-") as tmp:
        work = make_inputs(pathlib.Path(tmp))
        workload = Workload(binary=str(BIN / peer.name), argv=list(peer.args), cwd=GUEST_CWD, env=[f"HOME={GUEST_CWD}"],
                            files=[f"{work / 'in'}={GUEST_CWD}/in"], scratch=f"{GUEST_CWD}/out",
                            stdin=str(work / peer.stdin) if peer.stdin else "")
        system = System(workload=workload, harts=peer.harts, mode=mode, max_insts=MAX_INSTS,
                        mem_limit="2GiB", misaligned="allow", **params)
        start = time.perf_counter()
        result = simulate(system)
        prefix = f"{GUEST_CWD}/out/"
        files = {path[len(prefix):]: bytes(data) for path, data in result.scratch_files.items()
                 if path.startswith(prefix)}
        return Outcome(bytes(result.stdout), bytes(result.stderr), result.exit_code, files, insts=result.insts,
                       seconds=time.perf_counter() - start, stop_reason=result.stop_reason)


def differences(ref: Outcome, got: Outcome) -> list[str]:
    """What differs between two runs ([] when they are the same)."""
    out = []
    if got.stop_reason != "exit":
        out.append(f"stopped: {got.stop_reason}")
    for what in ("stdout", "stderr", "exit_code"):
        a, b = getattr(ref, what), getattr(got, what)
        if a != b:
            out.append(f"{what}: qemu {a[:200]!r} vs kvsim {b[:200]!r}")
    if ref.files.keys() != got.files.keys():
        out.append(f"files written: qemu {sorted(ref.files)} vs kvsim {sorted(got.files)}")
    out += [f"file out/{k} differs ({len(ref.files[k])} vs {len(got.files[k])} bytes)"
            for k in sorted(ref.files.keys() & got.files.keys()) if ref.files[k] != got.files[k]]
    return out


def build(names: list[str]) -> None:
    subprocess.run(["nice", "-n", "10", "bash", str(BUILD_SCRIPT), *names], check=True)


STRACE_CALL = re.compile(rb"^\d+ (\w+)\(", re.M)


def strace_calls(peer: Peer) -> collections.Counter:
    """The Linux calls the program makes under qemu-riscv64, with their counts."""
    return collections.Counter(m.decode() for m in STRACE_CALL.findall(run_qemu(peer, strace=True).stderr))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("programs", nargs="*", help=f"programs to run (default: all of {', '.join(BY_NAME)})")
    parser.add_argument("--strace", action="store_true", help="list the calls each program makes under qemu")
    parser.add_argument("--modes", default="functional,detailed", help="kvsim modes to compare with qemu")
    parser.add_argument("--no-build", action="store_true", help="do not build missing programs first")
    args = parser.parse_args()
    unknown = [n for n in args.programs if n not in BY_NAME]
    if unknown:
        parser.error(f"unknown programs {unknown}: the suite has {list(BY_NAME)}")
    peers = [BY_NAME[n] for n in args.programs] if args.programs else PEERS
    if not args.no_build:
        build([p.name for p in peers])
    if args.strace:
        for peer in peers:
            calls = strace_calls(peer)
            print(f"{peer.name}: " + " ".join(f"{c}×{n}" for c, n in sorted(calls.items())))
        return 0
    modes = args.modes.split(",")
    failed = 0
    print(f"{'program':10} {'kind':36} {'instructions':>13} " + " ".join(f"{m + ' = qemu':>18}" for m in modes))
    for peer in peers:
        ref = run_qemu(peer)
        cells, insts = [], 0
        for mode in modes:
            got = run_kvsim(peer, mode)
            diff = differences(ref, got)
            insts = insts or got.insts
            cells.append("yes" if not diff else "NO")
            if diff:
                failed += 1
                print(f"  {peer.name} ({mode}): " + "; ".join(diff), file=sys.stderr)
        print(f"{peer.name:10} {peer.kind:36} {insts:13,} " + " ".join(f"{c:>18}" for c in cells), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
