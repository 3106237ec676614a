"""The dense 3D-stacked server configs (configs/mercury.py, iridium.py, keyvault.py): valid Systems, the stacks'
limits, and the memcached-class server starting in the engine on a Mercury stack."""

import subprocess

import pytest

import configs
from models.params import ParamError
from models.sim import simulate

from conftest import WORKLOADS


@pytest.mark.parametrize("name", ["mercury", "iridium", "keyvault"])
def test_config_builds_a_valid_system(name):
    module = configs.load(name)
    system = module.system()
    system.validate()
    assert system.workload.binary.endswith("mcd-server")
    module.stack().validate()
    assert module.server().stacks in (96, 144)


@pytest.mark.parametrize("kind, clock, model, hz", [("a7", None, "inorder", 1e9), ("a15", None, "ooo", 1e9),
                                                     ("a15", "1.5GHz", "ooo", 1.5e9)])
def test_mercury_cores(kind, clock, model, hz):
    s = configs.load("mercury").system(cores=8, core_kind=kind, clock=clock, l2=True)
    s.validate()
    assert (s.core.model, s.core.clock, s.caches.l1d.size, s.caches.l2.size) == (model, hz, 32 << 10, 2 << 20)
    assert s.caches.l2_enabled
    if kind == "a15":
        assert s.core.issue_width == 3


def test_platform_specifics():
    assert configs.load("iridium").system().caches.l2_enabled          # every Iridium core needs its L2
    kv = configs.load("keyvault").system()
    assert (kv.core.model, kv.core.clock, kv.caches.l2_enabled) == ("ooo", 1_500_000_000, True)
    assert configs.load("keyvault").server().stacks_per_port == 12
    assert configs.load("iridium").stack().memory == "flash"
    assert configs.load("mercury").stack(latency="100ns").dram.access_latency == 100_000


def test_more_cores_than_the_ports_allow_is_refused():
    configs.load("mercury").system(cores=32).validate()
    with pytest.raises(ParamError, match="StackedDram.ports = 16 and StackedDram.max_cores_per_port = 2 allow "
                                         "at most 32 cores"):
        configs.load("mercury").system(cores=33)
    with pytest.raises(ParamError, match="NandFlash.controllers = 16"):
        configs.load("iridium").system(cores=40)
    with pytest.raises(ValueError, match=r"KeyVault cores = 17: must be in \[2, 16\]"):
        configs.load("keyvault").system(cores=17)
    with pytest.raises(ValueError, match="A7-class core runs at 1GHz"):
        configs.load("mercury").system(clock="1.5GHz")


def test_mcd_server_starts_on_a_mercury_stack_in_the_engine(engine, tmp_path):
    """Functional run of 2 instances without the client: each opens its NIC queue and polls it."""
    build = subprocess.run(["make", "-s", "-C", str(WORKLOADS / "mcd"), "riscv"], capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    system = configs.load("mercury").system(cores=2)
    system.mode = "functional"
    system.max_insts = 400_000
    system.client.enabled = False
    result = simulate(system, outdir=tmp_path)
    assert b"mcd: serving UDP ports 16384.." in result.stdout, result.stdout + result.stderr
    assert result.stats["system.hart0.insts"] > 100_000 and result.stats["system.hart1.insts"] > 100_000
    assert result.exit_code is None          # still serving when the instruction budget ran out


def test_mercury_and_iridium_use_the_integrated_mac_and_keyvault_keeps_its_nic():
    mercury, iridium, keyvault = (configs.load(n) for n in ("mercury", "iridium", "keyvault"))
    m, i, k = mercury.system(cores=4), iridium.system(cores=4), keyvault.system(cores=4)
    assert (m.nic.attach, m.nic.sram_size, m.nic.port_gbps, m.nic.ports) == ("on_die", 0, 10.0, 1)
    assert (i.nic.attach, i.nic.sram_size) == ("on_die", 2 << 20), "Iridium's rings and buffers in the MAC's SRAM"
    assert iridium.system(cores=4, sram=0).nic.sram_size == 0
    assert k.nic.attach == "pcie", "KeyVault's own NIC is another model"
    for s in (m, i, k):
        s.validate()


def test_the_power_model_prices_no_pcie_link_for_an_integrated_mac():
    from power.from_config import platform_from_config
    mercury, keyvault = configs.load("mercury"), configs.load("keyvault")
    on_die = platform_from_config(mercury.system(cores=4).to_dict())
    card = platform_from_config(keyvault.system(cores=4).to_dict())
    assert (on_die.nic.on_die, on_die.pcie.count) == (True, 0)
    assert (card.nic.on_die, card.pcie.count) == (False, 1)


def test_the_activity_of_an_integrated_mac_needs_no_pcie_counters():
    from power.activity import MissingCounters, _nic
    from power.activity import _Reader as Reader
    from power.from_config import platform_from_config
    platform = platform_from_config(configs.load("mercury").system(cores=4).to_dict())
    port = {f"system.nic0.port0.{k}": 900.0 for k in ("rx_bytes", "tx_bytes", "rx_frames", "tx_frames")}
    nic = _nic(Reader({"system.nic0.on_die.up_bytes": 1000.0, **port}), platform)
    assert nic.rx_bytes == 900.0 and nic.pcie_bytes == 0.0
    with pytest.raises(MissingCounters, match=r"NIC 0 .*system\.nic0\.pcie\.tlps"):
        _nic(Reader(port), platform)
