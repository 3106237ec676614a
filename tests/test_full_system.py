"""FS mode from Python: one parameter (System.os_level) chooses it, System.full_system says what boots, and the run
comes back as SE mode's do (console as guest stdout, statistics split by privilege level, the timing models' in
detailed mode). Bad inputs are refused with a clear error before or as the machine stops.

The bare-metal programs of workloads/fs/bare/ are built here with the cross compiler; the Linux tests need
`make fs-image` (workloads/fs/build/Image and initramfs.cpio) and are skipped without it."""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

import configs
from models import System, stats_paths
from models.errors import ConfigError, GuestHalted
from models.full_system import FullSystem
from models.params import ParamError
from models.sim import simulate

ROOT = pathlib.Path(__file__).resolve().parent.parent
FS_BUILD = ROOT / "workloads" / "fs" / "build"
LEVELS = stats_paths.PRIVILEGE_LEVELS
needs_image = pytest.mark.skipif(not (FS_BUILD / "Image").is_file() or not (FS_BUILD / "initramfs.cpio").is_file(),
                                 reason="needs `make fs-image`")


@pytest.fixture(scope="module")
def bare(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("fs_bare")
    subprocess.run(["bash", str(ROOT / "workloads" / "fs" / "bare" / "build.sh")], check=True,
                   env={**os.environ, "FS_OUT": str(out)})
    return out / "bare"


def fs_system(kernel: pathlib.Path, entry: str, mode: str = "functional", **fs) -> System:
    return System(harts=1, clock="1GHz", os_level="fs", mode=mode,
                  full_system=FullSystem(kernel=str(kernel), entry=entry, **fs))


def level_stats(stats: dict[str, float], hart: int, counter: str) -> dict[str, float]:
    return {lv: stats[stats_paths.HART_LEVEL.stat(hart, lv, counter)] for lv in LEVELS}


def test_the_os_level_is_one_declared_parameter_and_fs_refuses_what_it_does_not_have():
    assert System().os_level == "se"
    generated = (ROOT / "models" / "params" / "src" / "generated" / "system.rs").read_text()
    assert "pub os_level: SystemOsLevel" in generated and "pub full_system: FullSystem" in generated
    configs.load("linux_fs").system().validate()
    with pytest.raises(ParamError, match="needs System.full_system.kernel"):
        System(os_level="fs").validate()
    with pytest.raises(ParamError, match=r"os_level = 'fs' does not take a NIC"):
        s = fs_system(pathlib.Path("/k"), "linux")
        s.nic.enabled = True
        s.validate()
    with pytest.raises(ParamError, match="FS checkpoint .* needs System.client.enabled"):
        s = fs_system(pathlib.Path("/k"), "linux")
        s.checkpoint_to = "/tmp/x"
        s.validate()
    with pytest.raises(ParamError, match="1 to 8 harts"):
        s = fs_system(pathlib.Path("/k"), "linux")
        s.harts = 9
        s.validate()
    with pytest.raises(ParamError, match="only a Linux kernel unpacks an initramfs"):
        fs_system(pathlib.Path("/k"), "machine", initramfs="/rd").validate()


def test_a_bare_metal_program_runs_from_python_functionally_and_in_detail_with_its_levels_counted(bare, engine):
    runs = {mode: simulate(fs_system(bare / "privmmu", "machine", mode)) for mode in ("functional", "detailed")}
    for mode, r in runs.items():
        assert r.stop_reason == "exit" and r.exit_code == 0, mode
        s = r.stats
        insts = level_stats(s, 0, "insts")
        # privmmu runs code in every level (M, S by mret, U by mret), and each instruction is counted at one level.
        assert all(v > 0 for v in insts.values()), (mode, insts)
        assert sum(insts.values()) == s[stats_paths.HART.stat(0, "insts")], mode
        assert sum(level_stats(s, 0, "loads").values()) == s[stats_paths.HART.stat(0, "loads")], mode
        assert sum(level_stats(s, 0, "stores").values()) == s[stats_paths.HART.stat(0, "stores")], mode
        # Every picosecond of the hart's time is at one level (its wfi sleep at the level that slept).
        assert sum(level_stats(s, 0, "ticks").values()) == s[stats_paths.HART.stat(0, "sim_ticks")], mode
        assert s[stats_paths.HART_TRAPS.stat(0, "to_machine")] > 0, mode
    f, d = runs["functional"], runs["detailed"]
    assert d.stdout == f.stdout and f.stdout.endswith(b"privmmu: done\n")
    assert d.insts == f.insts, "the timing models change time, not what the program does"
    # The detailed run's time is the core model's: its cycles, kernel-level and user-level alike.
    cycles = d.stats[stats_paths.CORE.stat(0, 0, "cycles")]
    assert cycles > 0 and d.stats[stats_paths.CORE.stat(0, 0, "committed_insts")] == d.insts
    assert d.stats[stats_paths.CORE.stat(0, 0, "system_ops")] >= d.stats[stats_paths.FULL_SYSTEM.stat("system_insts")]
    assert level_stats(d.stats, 0, "ticks") != level_stats(f.stats, 0, "ticks")


def test_an_sbi_program_under_the_firmware_counts_its_calls(bare, engine):
    r = simulate(fs_system(bare / "sbi_s", "supervisor"))
    assert r.exit_code == 0
    assert r.stats[stats_paths.FULL_SYSTEM.stat("sbi_calls")] > 0
    assert level_stats(r.stats, 0, "insts")["machine"] == 0, "the firmware is the simulator: no M-mode code runs"


def test_a_kernel_that_is_not_risc_v_is_refused_before_running(tmp_path, engine):
    x86 = pathlib.Path("/bin/true")
    with pytest.raises(ConfigError, match="ELF file"):
        simulate(fs_system(x86, "linux"))
    with pytest.raises(ConfigError, match="not RISC-V"):
        simulate(fs_system(x86, "machine"))
    junk = tmp_path / "Image"
    junk.write_bytes(b"\0" * 4096)
    with pytest.raises(ConfigError, match="not a RISC-V Linux Image"):
        simulate(fs_system(junk, "linux"))
    with pytest.raises(ConfigError, match="make fs-image"):
        simulate(fs_system(FS_BUILD / "no-such-Image", "linux"))


@needs_image
def test_an_initramfs_larger_than_memory_is_refused_before_running(tmp_path, engine):
    big = tmp_path / "big.cpio"
    big.write_bytes(b"\0" * (20 << 20))
    with pytest.raises(ConfigError, match="initramfs .* does not fit in memory"):
        simulate(fs_system(FS_BUILD / "Image", "linux", initramfs=str(big), memory="32MiB"))


@needs_image
def test_a_kernel_that_panics_stops_the_run_with_the_consoles_last_lines(engine):
    # The command line names an init the initramfs does not have: the kernel panics ("No working init found"),
    # reboots at once (panic=-1), and the run stops with the kernel's own words.
    s = fs_system(FS_BUILD / "Image", "linux", initramfs=str(FS_BUILD / "initramfs.cpio"),
                  bootargs="earlycon console=ttyS0 panic=-1 initramfs_async=0 rdinit=/no-such-init init=/no-such-init")
    with pytest.raises(GuestHalted, match=r"(?s)reset the machine.*Kernel panic") as caught:
        simulate(s)
    assert b"Linux version" in caught.value.result.stdout


@needs_image
def test_a_command_line_the_kernel_rejects_stops_the_run_with_the_consoles_last_lines(engine):
    # mem=12M tells the kernel to use only the first 12 MiB: the device tree's initramfs (at 128 MiB) then lies in
    # no memory region, the kernel disables it ("is not a memory region - disabling initrd"), finds no root file
    # system and panics; it reboots (panic=-1) and the run stops quoting the console.
    s = fs_system(FS_BUILD / "Image", "linux", initramfs=str(FS_BUILD / "initramfs.cpio"),
                  bootargs="earlycon console=ttyS0 panic=-1 initramfs_async=0 mem=12M")
    with pytest.raises(GuestHalted, match=r"(?s)reset the machine.*console's last lines.*Unable to mount root fs") \
            as caught:
        simulate(s)
    console = caught.value.result.stdout.decode(errors="replace")
    assert "is not a memory region - disabling initrd" in console
    assert "kvsim-init" not in console, "/init never ran"


@needs_image
def test_linux_boots_to_init_from_python_functionally_and_in_detail(engine):
    runs = {}
    for detailed in (False, True):
        system = configs.load("linux_fs").system(detailed=detailed)
        runs[detailed] = simulate(system)
    for detailed, r in runs.items():
        console = r.stdout.decode(errors="replace")
        assert r.stop_reason == "exit" and r.exit_code == 0, detailed
        assert "kvsim-init: 1 cpus online" in console and "reboot: Power down" in console
        insts = level_stats(r.stats, 0, "insts")
        assert insts["user"] > 0 and insts["supervisor"] > insts["user"] and insts["machine"] == 0
        assert sum(level_stats(r.stats, 0, "ticks").values()) == r.stats[stats_paths.HART.stat(0, "sim_ticks")]
    assert runs[True].stats[stats_paths.CORE.stat(0, 0, "committed_insts")] == runs[True].insts
