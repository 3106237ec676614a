"""The NIC seen from a guest program: the discovery simulator calls (NIC_NUM_QUEUES, NIC_QUEUE_OF, NIC_QUEUE_REGS,
NIC_QUEUE_PORT), the register block (read-only registers, CTRL resetting heads and tails), the hart -> queue ->
port assignment over several ports, and clear faults for accesses the ABI does not allow. Steering, rings and DMA
are unit-tested in models/engine/src/nic.rs; whole runs with the KVS server are in test_kvs_e2e.py."""

from __future__ import annotations

import pytest

from models.errors import MemoryFault
from models.nic import Nic
from models.sim import simulate
from models.system import System, Workload

from conftest import cross_compile

PROBE = r"""
#include "kvsim.h"
#include "kvsim_libc.h"

static long call(long nr, long a) { return kvsim_call2(nr, a, 0); }

int main(int argc, char **argv) {
    long h = kvsim_hart_id();
    long nq = call(0x4b560008, 0), q = call(0x4b560009, h);
    long regs = q >= 0 ? call(0x4b56000a, q) : -1, port = q >= 0 ? call(0x4b56000b, q) : -1;
    long qid = -1, pid = -1, ctrl = -1, head = -1, ro = -1, mode = -1;
    if (regs > 0) {
        volatile unsigned long *r = (volatile unsigned long *)regs;
        qid = (long)r[0x48 / 8];
        pid = (long)r[0x50 / 8];
        mode = (long)r[0x78 / 8];        /* TX_COMPLETION */
        static unsigned long rx[8 * 2] __attribute__((aligned(16))), tx[8 * 2] __attribute__((aligned(16)));
        r[0x00 / 8] = (unsigned long)rx; r[0x08 / 8] = 8;
        r[0x20 / 8] = (unsigned long)tx; r[0x28 / 8] = 8;
        r[0x40 / 8] = 1;
        r[0x18 / 8] = 5;                 /* RX_TAIL */
        r[0x60 / 8] = 77;                /* RX_FRAMES is read-only */
        ro = (long)r[0x60 / 8];
        r[0x40 / 8] = 1;                 /* re-enable: heads and tails back to 0 */
        head = (long)r[0x18 / 8];
        ctrl = (long)r[0x40 / 8];
        if (argc > 1 && argv[1][0] == 'w')
            *(volatile unsigned int *)(regs + 0x18) = 1;      /* 32-bit store: faults */
        if (argc > 1 && argv[1][0] == 'h')
            (void)*(volatile unsigned long *)(regs + 0x88);  /* past the register block: faults */
        if (argc > 1 && argv[1][0] == 'm')
            (void)*(volatile unsigned long *)(regs + 0x14);  /* misaligned: faults */
    }
    printf("hart %ld nq %ld q %ld regs %lx port %ld qid %ld pid %ld ro %ld tail %ld ctrl %ld mode %ld bad %ld\n", h, nq,
           q, regs, port, qid, pid, ro, head, ctrl, mode, call(0x4b56000a, 4096));
    hart_exit(0); /* this hart only: returning from main would end them all */
    return 0;
}
"""


@pytest.fixture(scope="module")
def probe(engine, tmp_path_factory):
    d = tmp_path_factory.mktemp("nic")
    src = d / "nic_probe.c"
    src.write_text(PROBE)
    return cross_compile([src], d / "nic_probe", runtime=True)


def lines(result) -> dict[int, dict[str, str]]:
    out = {}
    for line in bytes(result.stdout).decode().splitlines():
        f = line.split()
        fields = dict(zip(f[0::2], f[1::2]))
        out[int(fields["hart"])] = fields
    return out


def test_discovery_and_registers(probe):
    r = simulate(System(harts=4, workload=Workload(binary=str(probe)), nic=Nic(enabled=True, ports=2)))
    assert r.exit_code == 0
    got = lines(r)
    for h in range(4):
        f = got[h]
        assert (f["nq"], f["q"], f["qid"]) == ("4", str(h), str(h))
        assert int(f["regs"], 16) == 0x30_0000_0000 + h * 0x1000
        assert f["port"] == f["pid"] == str(h * 2 // 4), "queues spread over the ports in blocks"
        assert (f["ro"], f["tail"], f["ctrl"], f["mode"]) == ("0", "0", "1", "0")
        assert f["bad"] == "-19", "a queue that does not exist: -ENODEV"


def test_more_harts_than_queues_and_no_nic(probe):
    r = simulate(System(harts=3, workload=Workload(binary=str(probe)), nic=Nic(enabled=True, queues=2)))
    got = lines(r)
    assert got[2]["q"] == "-19" and got[2]["nq"] == "2"
    assert got[1]["q"] == "1"
    r = simulate(System(harts=1, workload=Workload(binary=str(probe))))
    assert lines(r)[0]["nq"] == "0" and lines(r)[0]["q"] == "-19"


@pytest.mark.parametrize("arg, why", [("w", "64-bit"), ("h", "no NIC register"), ("m", "64-bit")])
def test_accesses_the_abi_does_not_allow_fault(probe, arg, why):
    with pytest.raises(MemoryFault, match=why) as info:
        simulate(System(workload=Workload(binary=str(probe), argv=[arg]), nic=Nic(enabled=True)))
    assert "device range" in info.value.reason


def test_a_driver_that_ignores_head_pointer_completion_faults(probe):
    """The probe enables its queue without registering TX_HEAD_WB: with Nic.tx_completion = head_pointer the NIC
    refuses to start the queue (a driver polling DD bits that never come would otherwise stall silently)."""
    with pytest.raises(MemoryFault, match="head pointer") as info:
        simulate(System(workload=Workload(binary=str(probe)), nic=Nic(enabled=True, tx_completion="head_pointer")))
    assert "TX_HEAD_WB" in info.value.reason


def test_tx_completion_takes_only_its_named_modes():
    from models.params import ParamError
    with pytest.raises(ParamError, match="tx_completion"):
        Nic(enabled=True, tx_completion="interrupt").validate()


SILENT = r"""
#include "kvsim.h"
#include "kvsim_libc.h"

/* Opens its queue, posts 7 RX buffers, then never polls: a server that loses every request. */
static unsigned long rx[16 * 2] __attribute__((aligned(16))), tx[16 * 2] __attribute__((aligned(16)));
static unsigned char bufs[7][2048];

int main(void) {
    long q = kvsim_call2(0x4b560009, kvsim_hart_id(), 0);
    volatile unsigned long *r = (volatile unsigned long *)kvsim_call2(0x4b56000a, q, 0);
    for (int i = 0; i < 7; i++) {
        rx[2 * i] = (unsigned long)bufs[i];
        rx[2 * i + 1] = 2048;
    }
    r[0x00 / 8] = (unsigned long)rx; r[0x08 / 8] = 16;
    r[0x20 / 8] = (unsigned long)tx; r[0x28 / 8] = 16;
    r[0x40 / 8] = 1;
    r[0x18 / 8] = 7;
    for (;;)
        __asm__ volatile("" ::: "memory");
}
"""


def test_a_lost_response_fails_the_run(engine, tmp_path):
    """The client notices requests that are never answered (here: a guest that never polls its ring), instead of
    running forever; the frames beyond the 7 posted descriptors wait in the RX FIFO."""
    from models.client import Client
    from models.errors import ClientCheckFailed

    src = tmp_path / "silent.c"
    src.write_text(SILENT)
    binary = cross_compile([src], tmp_path / "silent", runtime=True)
    system = System(workload=Workload(binary=str(binary)), nic=Nic(enabled=True),
                    client=Client(enabled=True, items=64, requests=10, stall_rounds=500))
    with pytest.raises(ClientCheckFailed, match=r"no response for 500 scheduling rounds with \d+ frames outstanding"):
        simulate(system)


def test_write_back_coalescing_needs_its_timer():
    from models.params import ParamError
    Nic(enabled=True, rx_wb_threshold=4, rx_wb_timer="2us").validate()
    with pytest.raises(ParamError, match="rx_wb_threshold = 4 needs Nic.rx_wb_timer"):
        Nic(enabled=True, rx_wb_threshold=4).validate()
    with pytest.raises(ParamError, match="rx_wb_threshold"):
        Nic(enabled=True, rx_wb_threshold=65, rx_wb_timer="2us").validate()


def test_attachment_takes_only_its_named_kinds_and_sets_the_register_latency():
    from models.params import ParamError
    with pytest.raises(ParamError, match="attach"):
        Nic(enabled=True, attach="usb").validate()
    assert Nic().attach == "pcie", "every existing config keeps the PCIe card"
    assert Nic(mmio_latency="100ns").register_latency == 100_000
    assert Nic(attach="on_die", on_die_mmio_latency="7ns").register_latency == 7_000
    with pytest.raises(ParamError, match="on_die_bandwidth"):
        Nic(attach="on_die", on_die_bandwidth=0.0).validate()


def test_nics_sharing_the_uncached_path_need_one_register_latency():
    """The socket's uncached path has one latency: a PCIe NIC beside an on-die MAC with another register latency
    is refused, naming it."""
    from models.params import ParamError
    s = System(harts=2, nics=[Nic(enabled=True), Nic(enabled=True, attach="on_die")])
    with pytest.raises(ParamError, match="register_latency"):
        s._validate_nics()
    System(harts=2, nics=[Nic(enabled=True, attach="on_die"), Nic(enabled=True, attach="on_die")])._validate_nics()


SRAM_PROBE = r"""
#include "kvsim.h"
#include "kvsim_libc.h"

/* Asks for its queue's slice of the MAC's buffer SRAM, writes its first and last words and reads them back. */
int main(void) {
    long q = kvsim_call2(0x4b560009, kvsim_hart_id(), 0);
    long base = kvsim_call2(0x4b560020, q, 0), bytes = kvsim_call2(0x4b560021, q, 0);
    long ok = 0;
    if (base > 0) {
        volatile unsigned long *first = (unsigned long *)base, *last = (unsigned long *)(base + bytes - 8);
        *first = 0x1234 + q;
        *last = 0x5678 + q;
        ok = *first == 0x1234 + q && *last == 0x5678 + q;
    }
    printf("hart %ld q %ld base %lx bytes %ld ok %ld bad %ld\n", kvsim_hart_id(), q, base, bytes, ok,
           kvsim_call2(0x4b560020, 4096, 0));
    hart_exit(0);
    return 0;
}
"""


def test_each_queue_finds_its_slice_of_the_macs_buffer_sram(engine, tmp_path):
    """NIC_QUEUE_SRAM / NIC_QUEUE_SRAM_BYTES (workloads/ABI.md): NIC k's SRAM starts at 0x31_0000_0000 + k GiB and is
    split evenly over its queues in whole pages; the guest can use its slice as memory. Without SRAM: 0."""
    src = tmp_path / "sram_probe.c"
    src.write_text(SRAM_PROBE)
    binary = cross_compile([src], tmp_path / "sram_probe", runtime=True)
    nics = [Nic(enabled=True, attach="on_die", queues=1, sram_size="64KiB"),
            Nic(enabled=True, attach="on_die", queues=2, sram_size="40KiB")]
    got = lines(simulate(System(harts=3, workload=Workload(binary=str(binary)), nics=nics)))
    # NIC 0: one queue, the whole 64 KiB. NIC 1: 40 KiB over two queues = 20 KiB each (5 pages).
    want = {0: (0x31_0000_0000, 65536), 1: (0x31_4000_0000, 20480), 2: (0x31_4000_0000 + 20480, 20480)}
    for h, (base, size) in want.items():
        assert (int(got[h]["base"], 16), int(got[h]["bytes"])) == (base, size), got[h]
        assert got[h]["ok"] == "1" and got[h]["bad"] == "-19"
    plain = lines(simulate(System(harts=1, workload=Workload(binary=str(binary)), nic=Nic(enabled=True))))
    assert (plain[0]["base"], plain[0]["bytes"], plain[0]["ok"]) == ("0", "0", "0")


def test_rings_and_buffers_in_the_macs_sram_take_an_iridium_stack_off_its_flash(mcd_server):
    """A 2-core Iridium stack (3D NAND behind the caches): with its rings and packet buffers in the MAC's SRAM the
    driver's and the MAC's traffic stays on the die, the flash serves only the store's lines, and the stack answers
    many times more requests per second; every response is checked either way."""
    import configs
    iridium = configs.load("iridium")

    def run(sram: str) -> dict:
        s = iridium.system(cores=2, items=1024, requests=300, sram=sram)
        assert s.nic.attach == "on_die"
        r = simulate(s)
        assert r.stop_reason == "client_done" and r.stats["client.requests"] == 300
        assert r.stats["client.loss"] == 0
        return r.stats

    flash, sram = run(0), run(iridium.SRAM_SIZE)
    assert "system.socket0.mem.mac_sram.reads" not in flash
    assert sram["system.socket0.mem.mac_sram.reads"] > 300 and sram["system.socket0.mem.mac_sram.writes"] > 300
    assert sram["system.socket0.mem.reads"] < flash["system.socket0.mem.reads"] / 5
    assert sram["client.throughput_mrps"] > 10 * flash["client.throughput_mrps"]
