"""Power-only parameters of a socket (read by the power model, `power/`, not by the engine).

The power model prices a run from the run's own resolved configuration (config.json): cores, caches, memory, NIC
and clocks come from the timing parameters; what only power and area depend on is declared here: the process
(technology node, device type, temperature, supply), the parts of the core the timing model abstracts away
(pipeline depth, physical registers, FP units, decode style, datapath and address widths and whether it has an
FPU at all, of the priced part), the on-chip network the timing model does not simulate yet, the DRAM devices'
datasheet currents, the NIC chips' internals and the power budget.

The defaults are a generic 22 nm high-performance RISC-V part; every platform config sets the values of the part
it describes (configs/xeon_e5_2697v2_socket.py, configs/brps_target_socket.py). ``DRAM_DEVICES`` names datasheet
current sets so a config picks one by name.
"""

from __future__ import annotations

from .params import Param, ParamError, SimObject

# DRAM device datasheet currents (mA) and I/O energy, per device. Timings (tCK, tRAS, tRP, tRFC, tREFI, burst)
# come from the run's memory configuration.
DRAM_DEVICES: dict[str, dict[str, float]] = {
    # Micron 8Gb DDR4 SDRAM x8 (MT40A1G8), speed grade -083E (DDR4-2400): IDD at VDD = 1.2 V, IPP at VPP = 2.5 V,
    # from the Micron datasheet's IDD table (approximate; check the revision you use).
    "micron-ddr4-8gb-x8": dict(vdd=1.2, idd0=48.0, idd2n=34.0, idd3n=43.0, idd4r=130.0, idd4w=118.0, idd5b=250.0,
                               vpp=2.5, ipp0=3.0, ipp3n=3.0, width_bits=8, density_gbit=8.0,
                               io_pj_per_bit=5.0),  # assumed: DQ driver + ODT energy per bit, 2-rank RDIMM channel
    # Micron 4Gb DDR3 SDRAM x8 (MT41J512M8), speed grade -125 (DDR3-1600): IDD at VDD = 1.5 V (approximate).
    "micron-ddr3-4gb-x8": dict(vdd=1.5, idd0=55.0, idd2n=32.0, idd3n=38.0, idd4r=157.0, idd4w=128.0, idd5b=220.0,
                               vpp=0.0, ipp0=0.0, ipp3n=0.0, width_bits=8, density_gbit=4.0,
                               io_pj_per_bit=7.0),  # assumed: SSTL-15 DQ driver + ODT energy per bit
}


class Technology(SimObject):
    """What the power model needs beyond the timing configuration (see the module docstring)."""

    part = Param.Str("generic", "name of the priced part (reported with the power figures)")
    node = Param.Float(22.0, "technology node, nm (the power model covers 5-180 nm; below 22 nm is extrapolated)",
                       min=5.0, max=180.0)
    device = Param.Enum("hp", "ITRS device type of the logic: hp (high performance), lstp (low standby power), "
                        "lop (low operating power)", choices=("hp", "lstp", "lop"))
    temperature = Param.Float(360.0, "junction temperature for leakage, K", min=250.0, max=400.0)
    vdd = Param.Float(0.0, "core supply, V (0: the node's nominal supply)", min=0.0, max=2.5)
    long_channel = Param.Bool(True, "arrays use long-channel devices where timing allows (lower leakage), as "
                              "McPAT's longer_channel_device")
    x86 = Param.Bool(False, "price the core's front end as an x86 decoder (the priced part is an x86 chip, even "
                     "though the simulated binary is RISC-V)")
    datapath_bits = Param.Count(64, "width of the priced core's integer datapath, bits: its register files, bypass "
                                "network, load/store queue data and pipeline latches (the simulated harts are RV64; "
                                "a part whose real cores are narrower is priced at its own width)", min=16, max=128)
    virtual_address_bits = Param.Count(48, "virtual address bits the priced core's TLBs, branch target buffer, return "
                                       "stack, ROB and load/store queues hold (Sv48: 48)", min=16, max=64)
    fpu = Param.Bool(True, "price a floating-point unit, an FP register file and an FP issue queue in each core "
                     "(False: the priced part's cores have none; the timing model keeps its FP units, and a run "
                     "that executed FP instructions is refused when priced)")
    pipeline_depth = Param.Count(14, "pipeline stages of the core (latches and clocking)", min=4, max=40)
    phys_int_regs = Param.Count(0, "physical integer registers (0: 32 architectural + ROB entries)", max=1024)
    phys_fp_regs = Param.Count(0, "physical FP registers (0: 32 architectural + half the ROB)", max=1024)
    issue_queue = Param.Count(0, "issue-queue entries (0: half the ROB)", max=512)
    tlb_entries = Param.Count(64, "entries of each of the ITLB and DTLB", min=1, max=4096)
    llc_banks = Param.Count(4, "banks per LLC slice", min=1, max=64)
    noc_ports = Param.Count(0, "ports per router (0: 3 on a ring, 5 on a mesh)", max=16)
    dram_device = Param.Enum("micron-ddr4-8gb-x8", "datasheet current set of the DRAM devices (DRAM_DEVICES)",
                             choices=tuple(DRAM_DEVICES))
    dram_ranks_per_channel = Param.Count(2, "ranks on each channel (DIMMs' ranks, not the timing model's ranks)",
                                         min=1, max=8)
    # ECC devices, when the DIMMs have them, are counted too (x8 with ECC: 9; power/config.py DramConfig).
    dram_devices_per_rank = Param.Count(8, "DRAM devices per rank (x8 devices on a 64-bit channel: 8)", min=1,
                                        max=36)
    nic_buffer = Param.Size("512KiB", "packet buffer of each NIC chip", min="4KiB", max="64MiB")
    nic_queues = Param.Count(64, "queue pairs of each NIC chip", min=1, max=4096)
    nic_clock = Param.Freq("400MHz", "clock of the NIC chips' logic", min="10MHz", max="5GHz")
    pcie_clock = Param.Freq("500MHz", "clock of the PCIe controllers' logic", min="10MHz", max="5GHz")
    tdp = Param.Float(0.0, "power budget of the socket, W (0: none; for the TDP check)", min=0.0, max=2000.0)

    def validate(self) -> None:
        super().validate()
        if self.datapath_bits & (self.datapath_bits - 1):
            raise ParamError(f"Technology.datapath_bits = {self.datapath_bits}: must be a power of two (16, 32, 64 "
                             "or 128)")
        if 0 < self.vdd < 0.2:
            raise ParamError(f"Technology.vdd = {self.vdd}: must be 0 (nominal) or in [0.2, 2.5] V")
