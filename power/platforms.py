"""One socket of each kvsim platform, as the power model sees it.

Figures come from ``../shared/spec/platforms.md`` (the billion-RPS target of Li et al., §2; the Xeon E5-2697 v2
baseline, §1) and vendor datasheets. Every value the sources do not give is marked ``# assumed``. These tables will
later be derived from the simulator's ``configs/``; they are kept flat so that is a small change.
"""

from __future__ import annotations

from .config import (CacheConfig, CoreConfig, DirectoryConfig, DramConfig, DramDevice, MemCtrlConfig, NicConfig,
                     NocConfig, PcieConfig, Platform)

# ---------------------------------------------------------------------------------------------- DRAM devices
# Micron 8Gb DDR4 SDRAM, x8 (MT40A1G8), speed grade -083E (DDR4-2400): IDD values (mA) for VDD = 1.2 V and
# IPP (VPP = 2.5 V), as read from the Micron datasheet's IDD table (approximate; check the datasheet revision you
# use); timings from JEDEC DDR4-2400 (tCK 0.833 ns, tRAS 32 ns, tRC 45.32 ns) and 8Gb tRFC1 350 ns, tREFI 7.8 us.
DDR4_2400_8Gb_x8 = DramDevice(
    name="Micron MT40A1G8-083E (8Gb DDR4-2400 x8)", vdd=1.2,
    idd0=48.0, idd2n=34.0, idd3n=43.0, idd4r=130.0, idd4w=118.0, idd5b=250.0,
    tck_ns=0.833, trc_ns=45.32, tras_ns=32.0, trfc_ns=350.0, trefi_ns=7800.0, burst=8, width_bits=8,
    vpp=2.5, ipp0=3.0, ipp3n=3.0,
    io_pj_per_bit=5.0,  # assumed: DQ driver + ODT energy per bit for a 2-rank RDIMM channel
)

# Micron 4Gb DDR3 SDRAM, x8 (MT41J512M8), speed grade -125 (DDR3-1600): IDD values (mA) at VDD = 1.5 V as read from
# the Micron datasheet (approximate); JEDEC DDR3-1600 timings (tCK 1.25 ns, tRAS 35 ns, tRC 48.75 ns), 4Gb tRFC 260 ns.
DDR3_1600_4Gb_x8 = DramDevice(
    name="Micron MT41J512M8-125 (4Gb DDR3-1600 x8)", vdd=1.5,
    idd0=55.0, idd2n=32.0, idd3n=38.0, idd4r=157.0, idd4w=128.0, idd5b=220.0,
    tck_ns=1.25, trc_ns=48.75, tras_ns=35.0, trfc_ns=260.0, trefi_ns=7800.0, burst=8, width_bits=8,
    io_pj_per_bit=7.0,  # assumed: SSTL-15 DQ driver + ODT energy per bit
)


# ---------------------------------------------------------------------------------------------- billion-RPS target
def brps_target_socket() -> Platform:
    """One socket of the billion-RPS target (platforms.md §2) at 22 nm."""
    core = CoreConfig(
        ooo=True, threads=1,
        fetch_width=3, decode_width=3, issue_width=3, peak_issue_width=3, commit_width=3,   # 3-issue (paper)
        fp_issue_width=1,                       # assumed
        pipeline_depth=14,                      # assumed
        alus=3, muls=1,                         # assumed: one ALU per issue slot, one mul/div unit
        fpus=1,                                 # assumed: one FP unit, as a McPAT-sized generic core has
        inst_buffer=16, decoded_buffer=16,      # assumed
        iq=32, fp_iq=16,                        # assumed: issue queue half the ROB
        rob=64,                                 # paper (ROB/issue sensitivity study)
        arch_int_regs=32, arch_fp_regs=32,      # RISC-V
        phys_int_regs=96, phys_fp_regs=64,      # assumed: 32 architectural + ROB-sized rename pool
        lq=24, sq=16,                           # assumed
        mem_ports=2,                            # assumed: 2 loads or 1 load + 1 store per cycle
        ras=16,                                 # assumed
        x86=False, machine_bits=64, vaddr_bits=48, paddr_bits=46, inst_bits=32,   # RV64, Sv48 (assumed widths)
        opcode_bits=7, uop_opcode_bits=8,
        btb=CacheConfig("btb", 4096 * 8, 8, 4, buffers=(0, 0, 0, 0)),              # assumed: 4K-entry BTB
        itlb_entries=64, dtlb_entries=64,       # assumed
        icache=CacheConfig("icache", 32 * 1024, 64, 8, latency_cycles=2,            # 32 KB I (assumed size), 8-way
                           buffers=(8, 8, 8, 0)),                                    # assumed buffers
        dcache=CacheConfig("dcache", 32 * 1024, 64, 8, latency_cycles=3,            # 32 KB D (paper), 8-way (assumed)
                           buffers=(10, 10, 8, 8)),                                  # assumed: 10 MSHRs
    )
    llc = CacheConfig(
        "llc", capacity_B=2 * 768 * 1024, block_B=64, assoc=20,   # 768 KB per core, one slice per 2-core cluster
        banks=4,                                                  # assumed
        sequential=True, latency_cycles=12, throughput_cycles=1,  # assumed
        buffers=(32, 16, 16, 16),                                 # assumed
        count=30, level=2)                                        # 30 slices = 45 MB (paper)
    dirs = [
        # Two-level directory (paper). Level 1: per cluster, tracks its 2 cores' L1 lines (2 x 64 KB / 64 B = 2048
        # entries; assumed 2x over-provisioned sparse directory, 8-way, 4 B per entry).
        DirectoryConfig("dir_l1", kind="cache", capacity_B=4096 * 4, block_B=4, assoc=8, count=30, level=1),
        # Level 2: sharer vectors (30 clusters + NICs + state = 4 B) for every LLC line, kept beside the LLC tags
        # (45 MB / 64 B lines = 737280 entries, 24576 per slice); assumed organisation.
        DirectoryConfig("dir_l2", kind="cache", capacity_B=24576 * 4, block_B=4, assoc=20, count=30, level=2),
    ]
    noc = NocConfig(
        "noc", kind="mesh", nodes_x=6, nodes_y=5,          # 30 clusters in a 2D mesh (paper); 6 x 5 assumed
        in_ports=7, out_ports=7,                           # 4 mesh + 2 cores + LLC slice (cluster crossbar merged)
        vcs=2, buffer_entries=4, flit_bits=128,            # assumed
    )
    return Platform(
        name="brps-target socket", node_nm=22, device="hp",
        temperature_K=358.0,                                # assumed: 85 C junction
        long_channel=True,                                  # assumed: long-channel devices in arrays (as McPAT)
        clock_MHz=2500.0,                                   # normal operating point (paper)
        cores=60, core=core, caches=[llc], directories=dirs, nocs=[noc],
        mc=MemCtrlConfig(count=6, channels_per_mc=1,        # 6 controllers, one DDR4-2400 channel each (paper)
                         io_clock_MHz=1200.0, peak_MBps=19200.0, databus_bits=64,
                         addrbus_bits=32,                   # assumed: address/command/control pins
                         ranks=2, with_phy=True),           # assumed: 2 ranks
        dram=DramConfig(DDR4_2400_8Gb_x8, channels=6, ranks_per_channel=2, devices_per_rank=8),  # assumed DIMMs
        nic=NicConfig(count=3, ports=1, port_gbps=100.0,    # 3 x 100 GbE (paper)
                      buffer_KB=512, queues=64,             # assumed
                      clock_MHz=400.0,                      # assumed
                      on_die=False),                        # NIC chips on PCIe cards, off the CPU die
        pcie=PcieConfig(count=3, lanes=8, gen=4, with_phy=True, clock_MHz=500.0),  # PCIe 4.0 x8 each (paper); clock assumed
        tdp_W=200.0,                                        # assumed socket power budget
    )


# ---------------------------------------------------------------------------------------------- Xeon E5-2697 v2
def xeon_e5_2697v2_socket() -> Platform:
    """One socket of the measured baseline (platforms.md §1): Ivy Bridge-EP, 12 cores, 22 nm."""
    core = CoreConfig(
        ooo=True, threads=1,                                 # SMT off in the measurements
        fetch_width=4, decode_width=4, issue_width=4, commit_width=4,   # 4-wide
        peak_issue_width=6,                                  # 6 execution ports
        fp_issue_width=2,                                    # assumed
        pipeline_depth=14,                                   # Ivy Bridge ~14-19 stages (assumed 14)
        alus=3, muls=1, fpus=2,                              # assumed: ALUs on ports 0/1/5, FP add + FP mul units
        inst_buffer=20, decoded_buffer=28,                   # 20-byte predecode, 28-uop decoded queue (assumed)
        iq=54, fp_iq=0,                                      # scheduler 54 (unified)
        rob=168,
        arch_int_regs=16, arch_fp_regs=16,
        phys_int_regs=160, phys_fp_regs=144,                 # Sandy/Ivy Bridge physical register files
        lq=64, sq=36,
        mem_ports=2,                                         # 2 load ports (+1 store)
        ras=16,                                              # assumed
        x86=True, machine_bits=64, vaddr_bits=48, paddr_bits=46, inst_bits=32, opcode_bits=16,
        uop_opcode_bits=8,
        btb=CacheConfig("btb", 4096 * 8, 8, 4, buffers=(0, 0, 0, 0)),  # assumed
        itlb_entries=128, dtlb_entries=64,
        icache=CacheConfig("icache", 32 * 1024, 64, 8, latency_cycles=3, buffers=(8, 8, 8, 0)),   # assumed buffers
        dcache=CacheConfig("dcache", 32 * 1024, 64, 8, latency_cycles=4, buffers=(10, 10, 8, 8)),  # 10 fill buffers
        l2=CacheConfig("l2", 256 * 1024, 64, 8, latency_cycles=12, buffers=(16, 16, 16, 16)),     # private 256 KB
    )
    llc = CacheConfig("llc", capacity_B=30 * 1024 * 1024 // 12, block_B=64, assoc=20,   # 30 MB, 20-way (assumed)
                      banks=4,                                                         # assumed
                      sequential=True, latency_cycles=30, buffers=(32, 16, 16, 16),    # assumed
                      count=12, level=3)                                               # one 2.5 MB slice per core
    noc = NocConfig("ring", kind="ring", nodes_x=12, nodes_y=1, in_ports=3, out_ports=3,  # ring stop per slice
                    vcs=1, buffer_entries=4, flit_bits=256)                           # 32 B ring (assumed)
    return Platform(
        name="xeon-e5-2697v2 socket", node_nm=22, device="hp",
        temperature_K=358.0,                                 # assumed
        long_channel=True,                                   # assumed
        clock_MHz=2700.0, cores=12, core=core, caches=[llc], nocs=[noc],
        mc=MemCtrlConfig(count=2, channels_per_mc=2,         # 4 DDR3-1600 channels (2 home agents x 2, assumed)
                         io_clock_MHz=800.0, peak_MBps=12800.0, databus_bits=64, addrbus_bits=32,
                         ranks=2, with_phy=True),            # assumed ranks
        dram=DramConfig(DDR3_1600_4Gb_x8, channels=4, ranks_per_channel=2, devices_per_rank=8),  # 64 GB/socket
        nic=NicConfig(count=2, ports=4, port_gbps=10.0,      # two of the four X520 cards per socket
                      buffer_KB=512, queues=64, clock_MHz=250.0, on_die=False),   # assumed buffer/queues/clock
        pcie=PcieConfig(count=5, lanes=8, gen=3, with_phy=True, clock_MHz=500.0),  # 40 PCIe 3.0 lanes; clock assumed
        tdp_W=130.0,                                         # Intel's TDP for the E5-2697 v2
    )


# Named operating points (core clock in MHz) of each platform; voltages come from power.dvfs.
OPERATING_POINTS = {
    "brps-target socket": {"low": 1500.0, "normal": 2500.0, "turbo": 3500.0},          # paper
    "xeon-e5-2697v2 socket": {"low": 1200.0, "normal": 2700.0, "turbo": 3500.0},       # Intel: min, base, max turbo
}

PLATFORMS = {"brps-target": brps_target_socket, "xeon-e5-2697v2": xeon_e5_2697v2_socket}


# ---------------------------------------------------------------------------------------------- runs
SOCKETS = {"brps_target": brps_target_socket, "xeon_e5_2697v2": xeon_e5_2697v2_socket}


def simulated_part(platform: Platform, config: dict) -> Platform:
    """The socket cut down to the part a run simulated, from the run's resolved configuration (config.json):
    its harts as cores, its LLC slices (each slice as the platform sizes it), its memory channels (one controller
    each) and, when the run had a NIC, one NIC with its PCIe link. Directories and the on-chip network are not
    simulated yet, so they are left out rather than priced idle."""
    import dataclasses

    channels = int(config["memory"]["channels"])
    has_nic = bool(config.get("nic", {}).get("enabled", False))
    llc = [dataclasses.replace(c, count=int(config["caches"]["llc_slices"])) for c in platform.caches[:1]]
    return dataclasses.replace(
        platform, cores=int(config["harts"]), caches=llc, directories=[], nocs=[],
        mc=dataclasses.replace(platform.mc, count=channels, channels_per_mc=1),
        dram=dataclasses.replace(platform.dram, channels=channels) if platform.dram is not None else None,
        nic=dataclasses.replace(platform.nic, count=int(has_nic)),
        pcie=dataclasses.replace(platform.pcie, count=int(has_nic)))
