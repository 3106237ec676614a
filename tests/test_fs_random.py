"""Random privileged and MMU instruction sequences (tests/fs_random.py) on kvsim's FS machine, run through the
Python path (System.os_level = 'fs'), against qemu-system-riscv64 -bios none: the console output must be equal.

A difference is reported at its first line, with the segment it is in and the lines around it; reproduce with
`python tests/fs_random.py --seed N -o r.S`."""

from __future__ import annotations

import pathlib
import shutil
import subprocess

import fs_random
import pytest

from models import System
from models.full_system import FullSystem
from models.sim import simulate

ROOT = pathlib.Path(__file__).resolve().parent.parent
BARE = ROOT / "workloads" / "fs" / "bare"
SEEDS = (1, 2, 3, 4)
SEGMENTS = 40


def build(source: str, folder: pathlib.Path, name: str) -> pathlib.Path:
    src, out = folder / f"{name}.S", folder / name
    src.write_text(source)
    subprocess.run(["riscv64-linux-gnu-gcc", "-march=rv64imac_zicsr_zifencei", "-mabi=lp64", "-mcmodel=medany",
                    "-nostdlib", "-static", "-no-pie", "-fno-pic", "-Wl,--build-id=none",
                    "-Wl,--defsym=LOAD_ADDR=0x80000000", "-T", str(BARE / "link.ld"), "-Wl,--no-warn-rwx-segments",
                    "-o", str(out), str(src), str(BARE / "common.S")], check=True)
    return out


def qemu(elf: pathlib.Path) -> str:
    out = subprocess.run(["timeout", "60", "qemu-system-riscv64", "-machine", "virt", "-m", "256M", "-smp", "1",
                          "-nographic", "-bios", "none", "-kernel", str(elf)], capture_output=True)
    return out.stdout.decode(errors="replace").replace("\r\n", "\n")


def kvsim(elf: pathlib.Path) -> str:
    result = simulate(System(harts=1, clock="1GHz", os_level="fs", max_insts=50_000_000,
                             full_system=FullSystem(kernel=str(elf), entry="machine")))
    assert result.stop_reason == "exit" and result.exit_code == 0, result.stop_reason
    return result.stdout.decode(errors="replace")


def first_difference(ours: str, theirs: str) -> str:
    a, b = ours.splitlines(), theirs.splitlines()
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    # Segment k prints its traps, then its dump under the (k + 1)-th "segment:" line.
    dumps = sum(1 for line in a[:at] if line.startswith("segment:"))

    context = "\n".join(f"{'>' if i == at else ' '} {i:5} kvsim {a[i] if i < len(a) else '<end>':30} qemu "
                        f"{b[i] if i < len(b) else '<end>'}" for i in range(max(0, at - 6), at + 4))
    where = f"segment {dumps - 1}'s dump or segment {dumps}'s traps" if dumps else "segment 0's traps"
    return f"first difference at line {at}, in {where} (segments from 0):\n{context}"


def test_the_generator_covers_the_privileged_pool():
    text = fs_random.render(seed=7, segments=60)
    for needle in ("mret\n", "sret\n", "wfi\n", "ebreak\n", "sfence.vma", "csrr s", "amoadd.d", "csrw satp, zero",
                   "csrw medeleg", "csrr a4, mscratch", "sd "):
        assert needle in text, needle


@pytest.mark.skipif(shutil.which("qemu-system-riscv64") is None, reason="needs qemu-system-riscv64 (qemu-system-misc)")
@pytest.mark.parametrize("seed", SEEDS)
def test_random_privileged_sequences_match_qemu_system(seed, tmp_path, engine):
    elf = build(fs_random.render(seed, SEGMENTS), tmp_path, f"fs_random_{seed}")
    ours, theirs = kvsim(elf), qemu(elf)
    assert theirs.endswith("fs_random: done\n"), theirs[-2000:]
    assert ours.count("segment:") == SEGMENTS and ours.count("trap:") > SEGMENTS, "every segment ran and trapped"
    assert ours == theirs, first_difference(ours, theirs)
