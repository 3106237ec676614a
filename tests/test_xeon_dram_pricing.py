"""The Xeon server's DRAM as the power model prices it: the memory platforms.md gives the measured server (128 GB of
DDR3-1600 per system, 4 channels a socket), as registered ECC DIMMs (configs/xeon_e5_2697v2_socket.py
technology(), power/server.py), and the arithmetic of the priced capacity and the DIMMs' registers."""

from dataclasses import replace

import pytest

import configs
from models.technology import DRAM_DEVICES
from power.config import DramConfig, DramDevice
from power.from_config import ConfigError, platforms_from_config
from power.server import XEON_SERVER, board_parts

GiB = 2**30


def xeon_server_platforms():
    return platforms_from_config(configs.load("xeon_e5_2697v2_dual").system(cores_per_socket=2).to_dict())


def test_the_priced_dram_is_the_measured_servers_128_gb():
    sockets = xeon_server_platforms()
    assert len(sockets) == 2
    assert sum(p.dram.capacity_bytes for p in sockets) == 128 * GiB          # platforms.md: 128 GB per system
    for p in sockets:
        dram = p.dram
        assert dram.channels == 4 and dram.capacity_bytes == 64 * GiB      # 4 channels a socket, 16 GB each
        # Two dual-rank x8 ECC DIMMs a channel: 8 data devices and 1 for ECC in each of 4 ranks, of 4 Gb.
        assert (dram.ranks_per_channel, dram.devices_per_rank, dram.device.width_bits) == (4, 9, 8)
        assert (dram.data_devices_per_rank, dram.ecc_devices_per_rank, dram.device.density_gbit) == (8, 1, 4.0)
        assert p.dram.device.name == "micron-ddr3-4gb-x8"
    # Registered DIMMs: one register per DIMM, two dual-rank DIMMs per channel of the server.
    assert XEON_SERVER.dimms == sum(p.dram.channels * p.dram.ranks_per_channel // 2 for p in sockets) == 16


def device(name: str) -> DramDevice:
    return DramDevice(name=name, tck_ns=1.25, tras_ns=35.0, trc_ns=48.75, trfc_ns=260.0, trefi_ns=7800.0,
                      **DRAM_DEVICES[name])


@pytest.mark.parametrize("name, per_rank, ranks, data, ecc, capacity", [
    ("micron-ddr3-4gb-x8", 9, 4, 8, 1, 4 * 4 * 8 * 4 * GiB // 8),         # 64 GiB from x8 ECC ranks
    ("micron-ddr3-4gb-x8", 8, 2, 8, 0, 4 * 2 * 8 * 4 * GiB // 8),         # 32 GiB: what 5409fa2 priced a socket
    ("micron-ddr4-8gb-x8", 8, 2, 8, 0, 4 * 2 * 8 * 8 * GiB // 8),
])
def test_the_capacity_is_channels_ranks_data_devices_and_density(name, per_rank, ranks, data, ecc, capacity):
    dram = DramConfig(device(name), channels=4, ranks_per_channel=ranks, devices_per_rank=per_rank)
    assert (dram.data_devices_per_rank, dram.ecc_devices_per_rank, dram.capacity_bytes) == (data, ecc, capacity)


def test_a_rank_narrower_than_the_data_bus_is_refused():
    config = configs.load("xeon_e5_2697v2_socket").system(cores=1).to_dict()
    config["technology"]["dram_devices_per_rank"] = 7            # 7 x8 devices: 56 bits of a 64-bit bus
    with pytest.raises(ConfigError, match="dram_devices_per_rank = 7 x8 devices .* at least 8"):
        platforms_from_config(config)


def test_the_dimms_registers_are_parts_fed_by_the_boards_regulators():
    chassis = replace(XEON_SERVER, dimms=8, dimm_register_W=1.0, pch_W=8.0, bmc_W=4.0, board_vr_efficiency=0.8)
    parts = {p.name.split(" at ")[0]: p.watts for p in board_parts(chassis, dram_W=10.0)}
    assert parts["8 RDIMM registers"] == 8.0
    # The regulators feed the DRAM, the registers, the PCH and the BMC: 30 W at 80% draw 37.5 W, 7.5 W lost.
    assert parts["the board's regulators for the DRAM, registers, PCH and BMC"] == 7.5
    unregistered = {p.name.split(" at ")[0] for p in board_parts(replace(chassis, dimms=0), dram_W=10.0)}
    assert not any("register" in name and "regulators" not in name for name in unregistered)
