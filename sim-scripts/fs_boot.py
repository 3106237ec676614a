"""Boot the FS image (`make fs-image`) on kvsim's full-system machine and on qemu-system-riscv64 with the same
device tree (kvsim generates it; qemu takes it with -dtb), and compare their consoles line by line.

    sim-scripts/fs_boot.py                       kernel and initramfs from workloads/fs/build/
    sim-scripts/fs_boot.py --max-insts 2000000000 --harts 1 --mem-mib 256

qemu's firmware (OpenSBI) prints a banner before the kernel starts, and kvsim's SBI reports its own implementation
ID: the comparison starts at the kernel's first line, and lines that name the SBI implementation or OpenSBI's
reserved memory are listed as expected differences, never hidden. Host times of both boots are printed."""

from __future__ import annotations

import argparse
import difflib
import pathlib
import re
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = ROOT / "workloads" / "fs" / "build"
FS_RUN = ROOT / "target" / "release" / "examples" / "fs_run"

# Lines that differ because the firmware differs (OpenSBI under qemu, the simulator's SBI in kvsim).
FIRMWARE_LINES = re.compile(r"SBI implementation ID|mmode_resv|OF: reserved mem")


def kernel_lines(console: str) -> list[str]:
    text = console.replace("\r\n", "\n")
    start = text.find("Linux version")
    if start < 0:
        return text.splitlines()
    line_start = text.rfind("\n", 0, start) + 1
    return text[line_start:].splitlines()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", type=pathlib.Path, default=BUILD / "Image")
    ap.add_argument("--initramfs", type=pathlib.Path, default=BUILD / "initramfs.cpio")
    ap.add_argument("--harts", type=int, default=1)
    ap.add_argument("--mem-mib", type=int, default=256)
    ap.add_argument("--max-insts", type=int, default=5_000_000_000)
    ap.add_argument("--qemu-timeout", type=int, default=120)
    args = ap.parse_args()
    for f in (args.kernel, args.initramfs):
        if not f.is_file():
            sys.exit(f"fs_boot: {f} is missing: run `make fs-image`")
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "kvsim-os", "--example", "fs_run"], cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory() as tmp:
        dtb = pathlib.Path(tmp) / "kvsim.dtb"
        t0 = time.monotonic()
        ours = subprocess.run(
            [str(FS_RUN), "--kernel", str(args.kernel), "--initramfs", str(args.initramfs), "--harts", str(args.harts),
             "--mem-mib", str(args.mem_mib), "--max-insts", str(args.max_insts), "--dtb-out", str(dtb)],
            capture_output=True, text=True, errors="replace")
        t_ours = time.monotonic() - t0
        t0 = time.monotonic()
        theirs = subprocess.run(
            ["timeout", str(args.qemu_timeout), "qemu-system-riscv64", "-machine", "virt", "-nographic",
             "-m", f"{args.mem_mib}M", "-smp", str(args.harts), "-dtb", str(dtb), "-kernel", str(args.kernel),
             "-initrd", str(args.initramfs)],
            capture_output=True, text=True, errors="replace")
        t_theirs = time.monotonic() - t0
    print(ours.stderr.strip())
    print(f"fs_boot: kvsim {t_ours:.1f} s host (exit {ours.returncode}), qemu-system-riscv64 {t_theirs:.1f} s host "
          f"(exit {theirs.returncode})")
    # qemu's guest time follows the host clock: on a loaded host its kernel may report a slow timer interrupt.
    a = kernel_lines(ours.stdout)
    b = [x for x in kernel_lines(theirs.stdout) if not x.startswith("hrtimer: interrupt took")]
    same = sum(1 for x, y in zip(a, b) if x == y)
    print(f"fs_boot: kvsim printed {len(a)} kernel console lines, qemu {len(b)}; {same} equal at the same position")
    expected = [x for x in set(a) ^ set(b) if FIRMWARE_LINES.search(x)]
    for line in sorted(expected):
        print(f"fs_boot: expected difference (firmware): {line}")
    diff = [d for d in difflib.unified_diff(b, a, "qemu", "kvsim", lineterm="", n=1)
            if not FIRMWARE_LINES.search(d)]
    print("\n".join(diff) if diff else "fs_boot: the consoles are equal (firmware lines aside)")
    return 0 if not diff else 1


if __name__ == "__main__":
    sys.exit(main())
