"""The platform as a tree: sockets, clusters and the on-chip network in the configuration, their checks (each a
ParamError naming the parameter and what is allowed, before anything runs), the statistics paths the tree gives,
the configs that describe the target and Xeon sockets, and the Rust mirror's enums and defaults."""

import pathlib
import re

import pytest

import configs
from models import socket as paths
from models.cache import Cache, CacheHierarchy
from models.codegen import enum_name, render
from models.core import Core
from models.noc import Noc
from models.params import ParamError, SimObject
from models.socket import Socket
from models.system import System, Workload

ROOT = pathlib.Path(__file__).resolve().parent.parent


def flat(**values) -> System:
    return System(workload=Workload(binary="x"), **values)


def target_noc(**values) -> Noc:
    settings = dict(mesh_x=6, mesh_y=5, mem_ctrl_routers=[(0, 0), (5, 4)], nic_routers=[])
    settings.update(values)
    return Noc(**settings)


# ---- the tree -----------------------------------------------------------------------------------------------------

def test_a_flat_system_is_one_socket_made_of_its_flat_fields():
    s = flat(harts=8, cores_per_cluster=2, core=Core(rob_entries=128))
    s.caches.llc.size = "4MiB"                     # old --set paths keep working: caches.llc.size, core.rob_entries
    s.validate()
    [socket] = s.socket_list()
    assert socket.cores == 8 and socket.clusters() == 4
    assert socket.core.rob_entries == 128 and socket.caches.llc.size == 4 << 20
    assert socket.noc.dimensions(socket.clusters()) == (2, 2)
    assert "sockets" in s.to_dict() and s.to_dict()["sockets"] == []


def test_listed_sockets_replace_the_flat_fields_and_harts_counts_their_cores():
    two = [Socket(cores=4, cores_per_cluster=2), Socket(cores=2)]
    s = flat(harts=6, sockets=two)
    s.validate()
    assert [x.cores for x in s.socket_list()] == [4, 2]
    assert len(s.hart_cores()) == 6
    with pytest.raises(ParamError, match=r"System\.harts = 5 but System\.sockets hold 6 cores"):
        flat(harts=5, sockets=two).validate()


def test_a_flat_field_set_beside_listed_sockets_is_refused_not_ignored():
    s = flat(harts=4, sockets=[Socket(cores=4)])
    s.caches.llc.size = "8MiB"
    with pytest.raises(ParamError, match=r"System\.caches is set but System\.sockets lists the sockets: set it on "
                                         r"the socket \(System\.sockets\[i\]\.caches\)"):
        s.validate()


def test_detailed_timing_of_several_sockets_is_accepted():
    # Modelled since issue 12 (tests/test_multisocket_timing.py).
    flat(harts=4, mode="detailed", sockets=[Socket(cores=2), Socket(cores=2)]).validate()


# ---- bad input: each named, with what is allowed ---------------------------------------------------------------------

def test_a_core_count_not_divisible_by_cores_per_cluster():
    with pytest.raises(ParamError, match=r"System\.harts = 7 is not a multiple of System\.cores_per_cluster = 2"):
        flat(harts=7, cores_per_cluster=2).validate()
    with pytest.raises(ParamError, match=r"System\.sockets\[1\]\.cores = 3 is not a multiple of "
                                         r"System\.sockets\[1\]\.cores_per_cluster = 2"):
        flat(harts=5, sockets=[Socket(cores=2), Socket(cores=3, cores_per_cluster=2)]).validate()


def test_a_mesh_too_small_for_its_clusters():
    with pytest.raises(ParamError, match=r"System\.noc: a 6 x 4 mesh has 24 routers, too few for 30 clusters .*"
                                         r"mesh_x x mesh_y must be at least 30"):
        flat(harts=60, cores_per_cluster=2, noc=target_noc(mesh_y=4)).validate()
    flat(harts=60, cores_per_cluster=2, noc=target_noc()).validate()


@pytest.mark.parametrize("name, where, message", [
    ("mem_ctrl_routers", (6, 0), r"= \(6, 0\) is off the 6 x 5 mesh: x must be in \[0, 5\] and y in \[0, 4\]"),
    ("mem_ctrl_routers", (0, 5), r"= \(0, 5\) is off the 6 x 5 mesh"),
    ("mem_ctrl_routers", (2, 2), r"= \(2, 2\) is not at the mesh's edge: x must be 0 or 5, or y must be 0 or 4"),
    ("nic_routers", (3, 3), r"= \(3, 3\) is not at the mesh's edge"),
    ("nic_routers", (9, 9), r"= \(9, 9\) is off the 6 x 5 mesh"),
])
def test_a_controller_or_nic_off_the_mesh_or_inside_it(name, where, message):
    system = flat(harts=60, cores_per_cluster=2, noc=target_noc(**{name: [(0, 0), where]}))
    system.nic.enabled = name == "nic_routers"
    if name == "nic_routers":
        system.noc.nic_routers = [where]
    index = 0 if name == "nic_routers" else 1
    with pytest.raises(ParamError, match=rf"System\.noc\.{name}\[{index}\] {message}"):
        system.validate()


def test_nic_routers_must_place_every_nic_of_the_socket():
    system = flat(harts=60, cores_per_cluster=2, noc=target_noc(nic_routers=[(2, 0), (3, 0)]))
    system.nic.enabled = True
    with pytest.raises(ParamError, match=r"System\.noc\.nic_routers places 2 NICs but 1 NIC\(s\) are attached"):
        system.validate()


def test_a_ring_is_one_row():
    with pytest.raises(ParamError, match=r"System\.noc\.mesh_y = 2: a ring is one row of routers"):
        flat(harts=12, noc=Noc(topology="ring", mesh_y=2)).validate()
    assert Noc(topology="ring").dimensions(12) == (12, 1)


def test_coordinates_are_checked_as_they_are_set():
    with pytest.raises(ParamError, match=r"Noc\.mem_ctrl_routers = .*is not an \(x, y\) pair"):
        Noc(mem_ctrl_routers=[(1, 2, 3)])
    with pytest.raises(ParamError, match=r"negative coordinate"):
        Noc(nic_routers=[(-1, 0)])


@pytest.mark.parametrize("clusters, dims", [(1, (1, 1)), (2, (2, 1)), (7, (3, 3)), (30, (6, 5)), (64, (8, 8))])
def test_an_automatic_mesh_is_the_smallest_near_square_grid(clusters, dims):
    assert Noc().dimensions(clusters) == dims
    assert Noc(mesh_x=clusters).dimensions(clusters) == (clusters, 1)


# ---- statistics paths -------------------------------------------------------------------------------------------

def test_statistics_paths_come_from_the_tree():
    assert paths.core_path(1, 17) + ".l1d.misses" == "system.socket1.core17.l1d.misses"
    assert paths.link_path(0, 3, 4) + ".flits" == "system.socket0.noc.link3_4.flits"
    assert paths.router_path(0, 5) == "system.socket0.noc.router5"
    assert paths.llc_slice_path(0, 3) == "system.socket0.llc.slice3"
    # The engine spells them the same way (kvsim_params::paths, generated from models/stats_paths.py), and no
    # engine or model code writes a socket's path as a literal.
    rust = (ROOT / "models" / "params" / "src" / "generated" / "paths.rs").read_text()
    # (A group written below its parent's prefix gets a relative function: a core's is `core{core}.` below
    # `system.socket{socket}.`.)
    assert 'format!("system.socket{socket}.")' in rust and 'format!("core{core}.")' in rust
    assert 'format!("link{src}_{dst}.")' in rust
    for source in (ROOT / "models").rglob("*.rs"):
        code = source.read_text().split("#[cfg(test)]")[0]
        if source.parent.name != "tests":
            assert not re.search(r'"system\.socket\d', code), f"{source} writes a socket's path as a literal"


# ---- the configs ----------------------------------------------------------------------------------------------------

def test_the_target_socket_reads_like_the_spec():
    target = configs.load("brps_target_socket")
    s = target.system()
    s.validate()
    [socket] = s.socket_list()
    assert socket.cores == 60 and socket.cores_per_cluster == 2 and socket.clusters() == 30
    assert socket.noc.topology == "mesh" and socket.noc.dimensions(30) == (6, 5)
    assert socket.caches.llc_slices == 30 and socket.caches.llc.size == 768 * 1024 * 60
    assert len(target.MEM_CTRL_ROUTERS) == 6 and len(target.NIC_ROUTERS) == target.NICS == 3
    # Every controller and NIC the target has would pass the edge check.
    Noc(mesh_x=6, mesh_y=5, mem_ctrl_routers=target.MEM_CTRL_ROUTERS,
        nic_routers=target.NIC_ROUTERS).check_topology("target", 30)
    # The LLC hit latency is the slice's own: the mesh adds the hops.
    assert socket.caches.llc.hit_latency == target.LLC_SLICE_LATENCY < 20
    # Smaller runs keep the socket's mesh and LLC.
    small = target.system(cores=8)
    small.validate()
    assert small.socket_list()[0].clusters() == 4 and small.noc.dimensions(4) == (6, 5)


def test_the_target_is_described_once_and_its_shares_take_their_parts_from_it():
    target = configs.load("brps_target_socket")
    for name in ("detailed_default", "kvs_default"):
        s = configs.load(name).system(harts=4)
        assert s.core.to_dict() == target.core().to_dict(), name
        assert s.caches.to_dict() == target.caches(4).to_dict(), name
        assert s.cores_per_cluster == 2 and s.caches.llc_slices == 2
        assert s.noc.router_latency == target.noc().router_latency
    one = configs.load("detailed_default").system()
    one.validate()
    assert one.cores_per_cluster == 1 and one.caches.llc.size == 768 * 1024


def test_the_xeon_socket_is_a_ring_of_twelve_stops():
    s = configs.load("xeon_e5_2697v2_socket").system()
    s.validate()
    [socket] = s.socket_list()
    assert socket.noc.topology == "ring" and socket.noc.dimensions(12) == (12, 1)
    assert socket.cores == 12 and socket.clusters() == 12 and socket.caches.llc_slices == 12


# ---- the Rust mirror: enums and defaults ----------------------------------------------------------------------------

def test_codegen_emits_an_enum_for_every_enum_parameter_and_every_default():
    text = render()
    for name, cls in SimObject.registry.items():
        if not cls.__module__.startswith("models."):
            continue
        assert f"impl Default for {name} {{" in text, name
        for param in cls._params.values():
            if param.kind == "enum":
                enum = enum_name(param)
                assert f"pub {param.name}: {enum}," in text
                for choice in param.choices:
                    assert f'#[serde(rename = "{choice}")]' in text
    assert "DetailedStart::Roi" in text and "Ddr4_2400" in text


def test_rust_defaults_are_the_python_defaults():
    text = render()
    block = text[text.index("impl Default for Noc {"):]
    block = block[:block.index("\n}\n")]
    noc = Noc()
    assert f"router_latency: {noc.router_latency}," in block and f"link_bytes: {noc.link_bytes}," in block
    assert "topology: NocTopology::Mesh," in block
    block = text[text.index("impl Default for CacheHierarchy {"):]
    block = block[:block.index("\n}\n")]
    llc = CacheHierarchy().llc
    assert f"size: {llc.size}," in block and f"hit_latency: {llc.hit_latency}," in block
    assert Cache().replacement == "lru" and "replacement: CacheReplacement::Lru," in text


def test_no_string_match_on_an_enum_parameter_is_left_in_rust():
    for source in (ROOT / "models").rglob("*.rs"):
        code = source.read_text()
        for field in ("mode", "detailed_start", "misaligned", "dataset", "popularity", "replacement", "model",
                      "bpred", "preset", "topology"):
            assert not re.search(rf"\.{field}\.as_str\(\)\s*\{{", code), f"{source}: match on {field} as text"


def test_every_socket_s_caches_use_the_dram_line():
    s = flat(harts=2, mode="detailed", sockets=[Socket(cores=2, caches=CacheHierarchy(
        l1i=Cache(line_size="128B"), l1d=Cache(line_size="128B"), l2=Cache(line_size="128B"),
        llc=Cache(size="1MiB", line_size="128B")))])
    with pytest.raises(ParamError, match=r"System\.sockets\[0\]\.caches line_size = 128: .*64-byte lines"):
        s.validate()
