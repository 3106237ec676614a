"""The engine's failure modes: each bad input or guest misbehaviour raises its models.errors class with the
right details (hart, PC, instruction word), and the run limits stop a run the documented way. The guest
programs are workloads/tests/faults/ (not part of the qemu comparison)."""

from __future__ import annotations

import pathlib
import random
import shutil
import subprocess

import pytest

from models.errors import ElfError, IllegalInstruction, MemoryFault, MemoryLimitExceeded, SimError, UnsupportedSyscall

from conftest import FAULT_PROGRAMS, TEST_PROGRAMS, run_engine


def symbol(binary: pathlib.Path, name: str) -> int:
    out = subprocess.run(["riscv64-linux-gnu-nm", str(binary)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16)
    raise AssertionError(f"{binary} has no symbol {name}")


# ---- malformed ELF files ----

def _good() -> bytes:
    return (TEST_PROGRAMS / "printf_fmt").read_bytes()


def _load_end(data: bytes) -> int:
    """End (file offset) of the last PT_LOAD segment's bytes, from the ELF64 program headers."""
    phoff = int.from_bytes(data[32:40], "little")
    phentsize, phnum = int.from_bytes(data[54:56], "little"), int.from_bytes(data[56:58], "little")
    end = 0
    for i in range(phnum):
        ph = data[phoff + i * phentsize: phoff + (i + 1) * phentsize]
        if int.from_bytes(ph[0:4], "little") == 1:  # PT_LOAD
            end = max(end, int.from_bytes(ph[8:16], "little") + int.from_bytes(ph[32:40], "little"))
    return end


def _cut_in_segments() -> bytes:
    """Headers intact, but the file ends halfway through the loadable bytes."""
    data = _good()
    phend = int.from_bytes(data[32:40], "little") + 56 * int.from_bytes(data[56:58], "little")
    cut = max(phend + 16, _load_end(data) // 2)
    assert cut < _load_end(data)
    return data[:cut]


def _patched(offset: int, value: bytes):
    def make() -> bytes:
        data = bytearray(_good())
        data[offset:offset + len(value)] = value
        return bytes(data)
    return make


BAD_ELVES = {
    "empty": lambda: b"",
    "garbage": lambda: random.Random(5).randbytes(8192),
    "garbage-with-elf-magic": lambda: b"\x7fELF" + random.Random(6).randbytes(8188),
    "truncated-header": lambda: _good()[:40],
    "truncated-program-headers": lambda: _good()[:64 + 20],
    "truncated-segments": _cut_in_segments,
    "wrong-machine-x86_64": _patched(18, (62).to_bytes(2, "little")),
    "elf32-class": _patched(4, b"\x01"),
    "big-endian": _patched(5, b"\x02"),
    "not-executable-type": _patched(16, (1).to_bytes(2, "little")),   # ET_REL
}


@pytest.mark.parametrize("kind", sorted(BAD_ELVES))
def test_malformed_elf_raises_elf_error(kind, tmp_path, workloads_built, engine):
    path = tmp_path / f"bad-{kind}"
    path.write_bytes(BAD_ELVES[kind]())
    path.chmod(0o755)
    with pytest.raises(ElfError):
        run_engine(path, max_insts=1_000_000)


def test_missing_binary_raises_elf_error(tmp_path, engine):
    with pytest.raises(ElfError):
        run_engine(tmp_path / "does-not-exist", max_insts=1000)


def test_unpatched_copy_still_runs(tmp_path, workloads_built, engine):
    """Control for the cases above: the same bytes, unmodified and copied elsewhere, run normally."""
    path = tmp_path / "good"
    shutil.copy(TEST_PROGRAMS / "printf_fmt", path)
    result = run_engine(path, max_insts=10_000_000)
    assert result.stop_reason == "exit" and result.exit_code == 3


# ---- guest faults ----

def test_illegal_instruction_names_pc_and_word(workloads_built, engine):
    binary = FAULT_PROGRAMS / "illegal_insn"
    with pytest.raises(IllegalInstruction) as info:
        run_engine(binary, max_insts=1_000_000)
    err = info.value
    assert err.pc == symbol(binary, "illegal_here"), f"pc {err.pc:#x}"
    assert err.insn == 0xDEADB00B, f"insn {err.insn:#x}"
    assert err.hart == 0


def test_store_to_unmapped_address_is_a_memory_fault(workloads_built, engine):
    binary = FAULT_PROGRAMS / "store_unmapped"
    with pytest.raises(MemoryFault) as info:
        run_engine(binary, max_insts=1_000_000)
    err = info.value
    assert err.pc == symbol(binary, "fault_here"), f"pc {err.pc:#x}"
    assert err.hart == 0
    assert "0x2800000000" in str(err).lower() or "2800000000" in str(err), str(err)


def test_misaligned_access_faults_by_default(workloads_built, engine):
    """workloads/tests/misaligned (compared with qemu under misaligned="allow") stops at its first misaligned
    load when System.misaligned keeps its default, "fault"."""
    binary = TEST_PROGRAMS / "misaligned"
    with pytest.raises(MemoryFault) as info:
        run_engine(binary, max_insts=10_000_000)
    err = info.value
    assert err.hart == 0
    # The first misaligned access is the program's only `lh` (at pages + 1).
    listing = subprocess.run(["riscv64-linux-gnu-objdump", "-d", "--disassemble=main", str(binary)],
                             capture_output=True, text=True, check=True).stdout
    lh = [int(line.split(":")[0], 16) for line in listing.splitlines()
          if line.startswith(" ") and ":" in line and line.split("\t")[2:3] == ["lh"]]
    assert len(lh) == 1, lh
    assert err.pc == lh[0], f"pc {err.pc:#x}, the lh is at {lh[0]:#x}"


def test_memory_limit_exceeded(workloads_built, engine):
    binary = FAULT_PROGRAMS / "mem_hog"   # touches 64 MiB of .bss
    with pytest.raises(MemoryLimitExceeded):
        run_engine(binary, mem_limit="1MiB", stack_size="64KiB", max_insts=50_000_000)


def test_memory_limit_not_hit_when_large_enough(workloads_built, engine):
    """Control: with room for its 64 MiB the same program completes."""
    result = run_engine(FAULT_PROGRAMS / "mem_hog", mem_limit="256MiB", max_insts=50_000_000)
    assert result.stop_reason == "exit" and result.exit_code == 0
    assert result.stdout == b"touched 64 MiB\n"


def test_infinite_loop_stops_at_max_insts(workloads_built, engine):
    result = run_engine(FAULT_PROGRAMS / "spin_forever", max_insts=100_000)
    assert result.stop_reason == "max_insts"
    assert result.insts == 100_000
    assert result.exit_code is None


def test_unknown_syscall_is_unsupported(workloads_built, engine):
    binary = FAULT_PROGRAMS / "bad_syscall"
    with pytest.raises(UnsupportedSyscall) as info:
        run_engine(binary, max_insts=1_000_000)
    assert info.value.pc == symbol(binary, "ecall_here"), f"pc {info.value.pc:#x}"
    assert info.value.hart == 0


def test_faults_are_sim_errors():
    for cls in (ElfError, IllegalInstruction, MemoryFault, MemoryLimitExceeded, UnsupportedSyscall):
        assert issubclass(cls, SimError)
