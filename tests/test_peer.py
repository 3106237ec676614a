"""The peer suite (sim-scripts/peer.py): well-known open-source programs, built from Debian's source packages with
plain `riscv64-linux-gnu-gcc -static -O2`, must print the same stdout and stderr, exit with the same status and
write the same files under kvsim (functional and detailed) as under qemu-riscv64, on the same input files.

A program whose build is absent is skipped with the reason: `make test` builds the cheap ones (peer-cheap), `make
peer-build` all of them. The expected results are never stored: qemu produces them at test time."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from conftest import ROOT


def _load_suite():
    spec = importlib.util.spec_from_file_location("peer_suite", ROOT / "sim-scripts" / "peer.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


suite = _load_suite()
CASES = [(p, mode) for p in suite.PEERS for mode in ("functional", "detailed")]


def _built(peer) -> None:
    if not (suite.BIN / peer.name).is_file():
        pytest.skip(f"{peer.name} is not built (workloads/peer/build.sh {peer.name}, or make peer-build)")


@pytest.fixture(scope="module")
def qemu_runs():
    """qemu-riscv64's run of each program, made once per module."""
    cache: dict[str, object] = {}

    def get(peer):
        if peer.name not in cache:
            cache[peer.name] = suite.run_qemu(peer)
        return cache[peer.name]

    return get


@pytest.mark.slow
@pytest.mark.parametrize("peer,mode", CASES, ids=[f"{p.name}-{m}" for p, m in CASES])
def test_peer_program_matches_qemu(peer, mode, qemu_runs, engine):
    _built(peer)
    ref = qemu_runs(peer)
    assert ref.exit_code == 0, f"{peer.name} fails under qemu-riscv64 ({ref.exit_code}): {ref.stderr[-500:]!r}"
    assert ref.stdout or ref.files, f"{peer.name} produced nothing under qemu-riscv64: the run is not a test"
    got = suite.run_kvsim(peer, mode)
    assert suite.differences(ref, got) == [], f"{peer.name} ({mode})"
    assert got.insts > 100_000, "the program ran (more than its start-up)"


def test_suite_inputs_are_deterministic(tmp_path):
    """The generated inputs (text corpus, JSON, float samples) are the same bytes every time."""
    a = suite.make_inputs(tmp_path / "a")
    b = suite.make_inputs(tmp_path / "b")
    assert suite.files_under(a / "in") == suite.files_under(b / "in")
    assert len((a / "in" / "corpus.txt").read_bytes()) >= 32 * 1024


def test_every_peer_has_its_build_rule():
    text = suite.BUILD_SCRIPT.read_text()
    for peer in suite.PEERS:
        assert f"build_{peer.name}()" in text, peer.name
