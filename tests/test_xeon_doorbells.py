"""The doorbells of the x86 platforms are UC stores (Core.ordered_uncached_stores); the RISC-V target keeps the
default."""
from configs import brps_target_socket, mica_e5_2680_dual, xeon_e5_2697v2_socket


def test_the_x86_servers_order_their_uncached_stores_and_the_target_does_not():
    assert xeon_e5_2697v2_socket.core().ordered_uncached_stores is True
    assert mica_e5_2680_dual.core().ordered_uncached_stores is True       # Sandy Bridge-EP, the same DPDK mapping
    target = brps_target_socket.system()
    assert all(c.ordered_uncached_stores is False for c in target.hart_cores())
