"""SE mode's file and memory calls, as ordinary glibc programs use them (workloads/glibc/files.c, memcalls.c):
the same results, error numbers and written files as under qemu-riscv64 on a host folder, in functional and
detailed mode; the guest's tree is read-only where mapped and has nothing outside it; the same files and seed give
the same statistics. The expected output is never stored: qemu produces it at test time."""

from __future__ import annotations

import os
import subprocess

import pytest
from test_qemu_diff import assert_same

from models.errors import MemoryFault
from models.params import ParamError
from models.sim import simulate
from models.system import System, Workload

from conftest import BUILD, QEMU, GuestRun, as_guest_run

FILES = BUILD / "glibc" / "files"
MEMCALLS = BUILD / "glibc" / "memcalls"
GUEST_DIR = "/work"
INSN_CAP = 200_000_000


@pytest.fixture
def tree(tmp_path):
    """in/ (a.txt, sub/b.txt, link -> sub/b.txt, escape -> /etc/passwd), an empty out/ and stdin.txt."""
    (tmp_path / "in" / "sub").mkdir(parents=True)
    (tmp_path / "out").mkdir()
    (tmp_path / "in" / "a.txt").write_text("alpha beta gamma delta\n")
    (tmp_path / "in" / "sub" / "b.txt").write_text("bravo\n")
    os.symlink("sub/b.txt", tmp_path / "in" / "link")
    (tmp_path / "stdin.txt").write_bytes(bytes(range(256)) * 3)
    return tmp_path


def kvsim_system(binary, args, tree, **params):
    workload = Workload(binary=str(binary), argv=list(args), files=[f"{tree / 'in'}={GUEST_DIR}/in"],
                        scratch=f"{GUEST_DIR}/out", cwd=GUEST_DIR, stdin=str(tree / "stdin.txt"))
    return System(workload=workload, max_insts=INSN_CAP, **params)


def run_qemu_in(tree, binary, args) -> GuestRun:
    with open(tree / "stdin.txt", "rb") as stdin:
        proc = subprocess.run([QEMU, str(binary), *args], cwd=tree, stdin=stdin, capture_output=True, timeout=120,
                              env={})
    return GuestRun(proc.stdout, proc.stderr, proc.returncode)


def written_files(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("mode", ["functional", "detailed"])
def test_file_calls_match_qemu(tree, mode, workloads_built, engine):
    ref = run_qemu_in(tree, FILES, ["compare"])
    assert ref.exit_code == 0 and ref.stdout.endswith(b"done\n"), ref
    expected_files = written_files(tree / "out")
    assert set(expected_files) == {"at2.txt", "rel.txt", "d/moved.txt", "log.txt"}, expected_files
    for f in (tree / "out").rglob("*"):
        if f.is_file():
            f.unlink()
    result = simulate(kvsim_system(FILES, ["compare"], tree, mode=mode))
    assert result.stop_reason == "exit"
    assert_same(f"files ({mode})", ref, as_guest_run(result))
    prefix = f"{GUEST_DIR}/out/"
    got = {k[len(prefix):]: bytes(v) for k, v in result.scratch_files.items()}
    assert got == expected_files


def test_the_guest_cannot_write_the_mapped_tree_or_leave_it(tree, workloads_built, engine):
    os.symlink("/etc/passwd", tree / "in" / "escape")
    result = simulate(kvsim_system(FILES, ["sandbox"], tree))
    lines = dict(line.rsplit(None, 1) if " -1 " not in line else line.split(" -1 ")
                 for line in bytes(result.stdout).decode().splitlines())
    lines = {k.strip(): v.strip() for k, v in lines.items()}
    assert lines == {
        "open /etc/passwd": "ENOENT",
        "open ../../../etc/passwd": "ENOENT",
        "open in/../../../etc/passwd": "ENOENT",
        "open link out of the tree": "ENOENT",
        "open in/a.txt for writing": "EROFS",
        "create in in/": "EROFS",
        "unlink in/a.txt": "EROFS",
        "mkdir in/x": "EROFS",
        "rename in/a.txt": "EROFS",
        "access W_OK in/a.txt": "EROFS",
        "access W_OK out": "0",
    }
    assert result.scratch_files == {}


def test_a_write_to_a_read_only_file_mapping_faults(tree, workloads_built, engine):
    ref = run_qemu_in(tree, FILES, ["rofault"])
    assert ref.exit_code == -11 and ref.stdout == b"mapped 1\n", ref
    with pytest.raises(MemoryFault, match="store"):
        simulate(kvsim_system(FILES, ["rofault"], tree))


@pytest.mark.parametrize("mode", ["functional", "detailed"])
def test_memory_calls_match_qemu(mode, workloads_built, engine):
    proc = subprocess.run([QEMU, str(MEMCALLS)], capture_output=True, timeout=120, env={})
    ref = GuestRun(proc.stdout, proc.stderr, proc.returncode)
    assert ref.exit_code == 0 and b"realloc down kept 1" in ref.stdout, ref
    result = simulate(System(workload=Workload(binary=str(MEMCALLS)), max_insts=INSN_CAP, mode=mode))
    assert_same(f"memcalls ({mode})", ref, as_guest_run(result))


def test_same_files_and_seed_give_the_same_statistics(tree, workloads_built, engine):
    runs = [simulate(kvsim_system(FILES, ["compare"], tree, mode="detailed", seed=5)) for _ in range(2)]
    assert runs[0].stats == runs[1].stats
    assert runs[0].scratch_files == runs[1].scratch_files
    assert runs[0].stats["system.os.fs.opens"] > 10


def test_scratch_save_writes_the_tree_to_the_host(tree, tmp_path, workloads_built, engine):
    save = tmp_path / "saved"
    system = kvsim_system(FILES, ["compare"], tree)
    system.workload.scratch_save = str(save)
    result = simulate(system)
    assert written_files(save) == {k[len(GUEST_DIR) + 5:]: bytes(v) for k, v in result.scratch_files.items()}


def test_bad_file_configuration_is_a_param_error(tree):
    with pytest.raises(ParamError, match="does not exist"):
        System(workload=Workload(binary=str(FILES), files=[str(tree / "missing")])).validate()
    with pytest.raises(ParamError, match="Workload.stdin"):
        System(workload=Workload(binary=str(FILES), stdin=str(tree / "missing"))).validate()
    with pytest.raises(ParamError, match="absolute"):
        System(workload=Workload(binary=str(FILES), scratch="out")).validate()
    with pytest.raises(ParamError, match="scratch_save"):
        System(workload=Workload(binary=str(FILES), scratch_save=str(tree))).validate()
