"""FS mode's network: Linux's virtio-net driver on the simulator's virtio-mmio device, /init serving the
memcached-class server on the kernel's UDP sockets (one pinned thread per hart), and the ghost client checking
every response through the device, the kernel's UDP/IP stack and the wire. Bad input: a guest that never brings
its network device up stops the run with the console's last lines. Needs `make fs-image` (skipped without it)."""

from __future__ import annotations

import pytest

import configs
from models import stats_paths
from models.errors import ClientCheckFailed, GuestHalted
from models.params import ParamError
from models.sim import simulate
from tests.test_full_system import needs_image

NET = stats_paths.GROUPS["fs_net"]


def client_system(harts: int = 1, detailed: bool = False, items: int = 256, requests: int = 300, extra: str = "",
                  transport: str = "udp"):
    s = configs.load("linux_fs").system(harts=harts, detailed=detailed, client=True, items=items, requests=requests,
                                        transport=transport)
    s.full_system.bootargs += extra
    return s


@needs_image
@pytest.mark.parametrize("harts", [1, 2])
def test_memcached_over_virtio_net_and_the_kernels_udp_every_response_checked(engine, harts):
    r = simulate(client_system(harts=harts))
    st = r.stats
    console = r.stdout.decode(errors="replace")
    assert r.stop_reason == "client_done", console[-2000:]
    assert f"kvsim-init: {harts} cpus online" in console and "eth0 up at 10.0.0.2" in console
    # Every request was answered and checked: the bulk load (one SET per item) and the measured mix.
    assert st["client.requests"] == 300
    assert st["client.responses_checked"] == 256 + 300
    assert st["client.hits"] > 0 and st["client.misses"] == 0
    # Every frame the client sent reached the guest; the guest sent one reply per frame, and ARP before its first.
    rx, tx = st[NET.stat("rx_frames")], st[NET.stat("tx_frames")]
    assert st[NET.stat("arp_replies")] >= 1 and st[NET.stat("other_frames")] == 0
    assert tx == st["client.load.packets"] + st["client.packets"] + st[NET.stat("arp_replies")]
    assert rx == tx, "one request frame in for every reply (ARP replies in for ARP requests)"
    assert st[NET.stat("rx_dropped")] == 0 and st[NET.stat("interrupts")] > 0
    assert 25e6 < st[NET.stat("up_ticks")] < st["system.sim_ticks"], "up after the ~30 ms boot"
    # The kernel's network stack runs in S mode, the server in U mode; both on every hart that served.
    for h in range(harts):
        assert st[stats_paths.HART_LEVEL.stat(h, "user", "insts")] > 0
    assert st["client.insts_per_request"] > 1000


@needs_image
@pytest.mark.parametrize("harts", [1, 2])
def test_memcached_over_the_kernels_tcp_every_response_checked(engine, harts):
    # The client's TCP against Linux's: the handshake (after ARP), segments with piggybacked ACKs, every response
    # message taken off the stream and checked.
    r = simulate(client_system(harts=harts, transport="tcp"))
    st = r.stats
    assert r.stop_reason == "client_done"
    assert st["client.requests"] == 300 and st["client.responses_checked"] == 256 + 300
    assert st["client.tcp.connections"] == st["client.tcp.handshakes"] == harts and st[NET.stat("other_frames")] == 0
    assert st[NET.stat("rx_dropped")] == 0


@needs_image
def test_the_client_catches_a_server_that_returns_a_wrong_value(engine):
    # The server's test hook flips a bit of every 7th GET hit's value after the store, before the kernel's UDP
    # checksum: only the client's check of the value can see it.
    with pytest.raises(ClientCheckFailed, match="wrong value or flags"):
        simulate(client_system(extra=" corrupt_every=7"))


@needs_image
def test_memcached_over_virtio_net_in_detailed_mode(engine):
    r = simulate(client_system(detailed=True, items=64, requests=100))
    st = r.stats
    assert r.stop_reason == "client_done"
    assert st["client.requests"] == 100 and st["client.responses_checked"] == 164
    assert st[stats_paths.CORE.stat(0, 0, "committed_insts")] == r.insts
    assert 0 < st["client.latency.mean"] < 1e6, "round trips measured in the core model's time (ns)"


@needs_image
def test_a_guest_that_never_brings_its_network_device_up_stops_with_the_consoles_last_lines(engine):
    # By 5 ms of simulated time the kernel is still booting (it reaches /init at ~30 ms): the device is not up.
    s = client_system()
    s.full_system.net_up_within = "5ms"
    with pytest.raises(GuestHalted, match=r"(?s)never brought its network device up.*5\.000 ms.*console's last"):
        simulate(s)
    # A guest whose /init powers off instead (an argument its server refuses) stops as soon as it does.
    with pytest.raises(GuestHalted, match=r"(?s)never brought its network device up \(it powered off.*"
                                          r"unknown server argument bogus=1"):
        simulate(client_system(extra=" bogus=1"))


def test_the_client_in_fs_mode_needs_a_guest_that_serves_memcached():
    s = configs.load("linux_fs").system(client=True)
    s.validate()
    s.full_system.bootargs = "console=ttyS0"
    with pytest.raises(ParamError, match="must end with '-- mcd"):
        s.validate()
    s = configs.load("linux_fs").system(client=True)
    s.client.protocol = "mica"
    with pytest.raises(ParamError, match="speaks memcached"):
        s.validate()
    assert configs.load("linux_fs").system(client=True).full_system.server_argv()[0] == "port=11211"


def mib_system(requests: int = 6, extra: str = ""):
    """4 items of 1 MiB values over the kernel's TCP (the server's item_max= is the 2 MiB chunk they need)."""
    s = configs.load("linux_fs").system(client=True, items=4, requests=requests, transport="tcp", value_size=1 << 20,
                                        store="10m", tcp_segments=64)
    s.client.get_ratio = 0.5
    s.full_system.bootargs += extra
    return s


@needs_image
def test_1_mib_sets_and_gets_span_hundreds_of_segments_through_the_kernels_tcp_every_byte_checked(engine):
    s = mib_system()
    assert "item_max=2097152" in s.full_system.bootargs and "mem=10m" in s.full_system.bootargs
    r = simulate(s)
    st = r.stats
    assert r.stop_reason == "client_done", r.stdout.decode(errors="replace")[-2000:]
    assert st["client.responses_checked"] == 4 + 6 and st["client.misses"] == 0
    assert st["client.hits"] > 0 and st["client.puts"] > 0 and st["client.hits"] + st["client.puts"] == 6
    # Every SET and GET hit moves a 1 MiB value: over 700 segments of at most 1,460 bytes each way.
    moves = 4 + st["client.puts"] + st["client.hits"]
    assert st["client.tcp.segments_sent"] > 718 * (4 + st["client.puts"])
    assert st["client.tcp.segments_received"] > 718 * st["client.hits"]
    assert st[NET.stat("rx_frames")] > 718 * moves / 2 and st[NET.stat("rx_dropped")] == 0
    # The server's test hook flips the last byte of a GET hit's 1 MiB value: only the client's check sees it.
    with pytest.raises(ClientCheckFailed, match="wrong value or flags"):
        simulate(mib_system(extra=" corrupt_every=1"))


def test_values_beyond_the_servers_chunk_or_memory_or_a_datagram_are_refused_before_the_run():
    linux_fs = configs.load("linux_fs")
    linux_fs.system(client=True, transport="tcp", value_size=1 << 20, items=4, store="10m").validate()
    # Over UDP a SET must fit one datagram.
    with pytest.raises(ParamError, match="do not fit one 1514-byte frame"):
        linux_fs.system(client=True, value_size=2048).validate()
    # The server's largest chunk (item_max=) must hold the item: 56 + 8 + 1 MiB bytes need 2 MiB.
    s = linux_fs.system(client=True, transport="tcp", value_size=1 << 20, items=4, store="10m")
    s.full_system.bootargs = s.full_system.bootargs.replace("item_max=2097152", "item_max=1m")
    with pytest.raises(ParamError, match="more than the server's largest chunk item_max=1048576"):
        s.validate()
    s.full_system.bootargs = s.full_system.bootargs.replace("item_max=1m", "item_max=3m")
    with pytest.raises(ParamError, match="item_max=3145728 is not a power of two"):
        s.validate()
    # The stores of 8 instances of 32 MiB and their 2 MiB TCP buffers do not fit 256 MiB beside the kernel.
    s = linux_fs.system(client=True, harts=8, transport="tcp", value_size=1 << 20, items=4, store="32m")
    with pytest.raises(ParamError, match=r"memory = 268435456 bytes cannot hold 8 server instance\(s\)"):
        s.validate()
    s = linux_fs.system(client=True, transport="tcp", value_size=1 << 20, items=4, store="1m")
    with pytest.raises(ParamError, match="store mem=1048576 cannot hold one 2097152-byte chunk"):
        s.validate()
    # Beyond memcached's 1 MiB item.
    with pytest.raises(ParamError, match="value_size"):
        linux_fs.system(client=True, transport="tcp", value_size=(1 << 20) + 1).validate()
