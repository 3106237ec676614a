"""What the power model needs to know about a chip: a plain dataclass tree (one socket).

The McPAT XML reader (``power.mcpat_xml``) and the kvsim platform tables (``power.platforms``) both produce a
``Platform``; the model (``power.model``) prices it. Sizes are in bytes, clocks in MHz, like McPAT's inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .tech import DEVICE_TYPES


def _check_device(owner: str, device: str | None) -> None:
    if device is not None and device not in DEVICE_TYPES:
        raise ValueError(f"{owner}.device={device!r} is unknown: allowed {', '.join(DEVICE_TYPES)} or None (the "
                         f"chip's)")


def _positive(owner: str, **kv: float) -> None:
    for k, v in kv.items():
        if v is None or v < 0:
            raise ValueError(f"{owner}.{k}={v!r} is out of range: allowed >= 0")


@dataclass
class CacheConfig:
    """A cache (or a directory cache). ``assoc`` 0 = fully associative."""

    name: str
    capacity_B: int
    block_B: int = 64
    assoc: int = 8
    banks: int = 1
    rw_ports: int = 1
    rd_ports: int = 0
    wr_ports: int = 0
    clock_MHz: float | None = None      # None: the clock of the domain the cache belongs to
    throughput_cycles: float = 1.0      # cycles between accesses at peak
    latency_cycles: float = 3.0
    output_bits: int = 0                # 0: one block
    write_back: bool = True
    sequential: bool = False            # tag then data (LLC style) instead of parallel tag+data
    buffers: tuple[int, int, int, int] = (8, 8, 8, 8)  # MSHR, fill, prefetch, write-back buffer entries
    count: int = 1                      # instances (e.g. LLC slices, banks placed as separate caches)
    duty_cycle: float = 1.0             # fraction of cycles accessed at peak (McPAT's duty_cycle)
    level: int = 2                      # 2 or 3 (which McPAT component it maps to)
    device: str | None = None           # its own ITRS device type (McPAT's per-cache device_type: the Cortex-A9's
    #                                     high-performance L2 on a low-power chip); None: the chip's

    def validate(self) -> None:
        _positive(f"cache {self.name}", capacity_B=self.capacity_B, block_B=self.block_B, assoc=self.assoc,
                  banks=self.banks, count=self.count, throughput_cycles=self.throughput_cycles)
        _check_device(f"cache {self.name}", self.device)
        if self.capacity_B < self.block_B or self.block_B < 1:
            raise ValueError(f"cache {self.name}.capacity_B={self.capacity_B} must be >= block_B={self.block_B} "
                             f">= 1")


@dataclass
class DirectoryConfig:
    """A coherence directory: ``kind`` 'cam' (shadow tags, McPAT type 0) or 'cache' (directory cache, type 1)."""

    name: str
    kind: str
    capacity_B: int
    block_B: int
    assoc: int = 0
    clock_MHz: float | None = None
    throughput_cycles: float = 1.0
    latency_cycles: float = 1.0
    output_bits: int = 8
    count: int = 1
    level: int = 1                      # 1: L1 directory (McPAT L1Directory), 2: L2 directory
    buffers: tuple[int, int, int, int] = (8, 8, 8, 8)  # a directory cache's MSHR, fill, prefetch, write-back
    #                                     buffer entries (McPAT's buffer_sizes; the export's default, assumed)
    device: str | None = None           # its own device type, as a cache's (``CacheConfig.device``)


@dataclass
class CoreConfig:
    ooo: bool = True
    threads: int = 1
    fetch_width: int = 4
    decode_width: int = 4
    issue_width: int = 4
    peak_issue_width: int = 6
    commit_width: int = 4
    fp_issue_width: int = 2
    pipeline_depth: int = 14
    alus: float = 4
    muls: float = 1
    fpus: float = 1
    inst_buffer: int = 16
    decoded_buffer: int = 16
    iq: int = 32
    fp_iq: int = 16
    rob: int = 128
    arch_int_regs: int = 32
    arch_fp_regs: int = 32
    phys_int_regs: int = 128
    phys_fp_regs: int = 128
    reg_windows: int = 0
    lq: int = 32
    sq: int = 32
    mem_ports: int = 2
    ras: int = 16
    rename_cam: bool = False            # CAM-based rename (Alpha) rather than RAM-based (RAT + free list)
    checkpoints: int = 0
    rs_window: bool = False             # reservation-station window (P6 style) rather than physical-register based
    x86: bool = False
    # McPAT's "Embedded" core (its ARM Cortex-A9 example): smaller, lower-energy functional units and an
    # undifferentiated-core area from embedded-processor data rather than desktop dies (power.model.core)
    embedded: bool = False
    opt_clockrate: bool = True          # McPAT's opt_clockrate: an embedded core sized for its clock
    machine_bits: int = 64
    vaddr_bits: int = 64
    paddr_bits: int = 52
    inst_bits: int = 32
    opcode_bits: int = 16
    uop_opcode_bits: int = 8
    btb: CacheConfig = field(default_factory=lambda: CacheConfig("btb", 4096, 4, 2))
    local_pred_entries: int = 1024
    local_hist_bits: int = 10
    local_ctr_bits: int = 3
    global_pred_entries: int = 4096
    global_ctr_bits: int = 2
    chooser_entries: int = 4096
    chooser_bits: int = 2
    itlb_entries: int = 64
    dtlb_entries: int = 64
    icache: CacheConfig = field(default_factory=lambda: CacheConfig("icache", 32768, 64, 8))
    dcache: CacheConfig = field(default_factory=lambda: CacheConfig("dcache", 32768, 64, 8))
    l2: CacheConfig | None = None       # a private L2 counted in the core
    duty: dict[str, float] = field(default_factory=lambda: dict(
        IFU=0.25, LSU=0.25, MemManU_I=0.25, MemManU_D=0.25, ALU=1.0, MUL=0.3, FPU=0.3,
        ALU_cdb=1.0, MUL_cdb=0.3, FPU_cdb=0.3))

    def validate(self) -> None:
        for k in ("threads", "fetch_width", "decode_width", "issue_width", "commit_width", "pipeline_depth"):
            v = getattr(self, k)
            if not isinstance(v, (int, float)) or v < 1:
                raise ValueError(f"core.{k}={v!r} is out of range: allowed >= 1")
        for k in ("alus", "muls", "fpus", "iq", "fp_iq", "rob", "lq", "sq", "phys_int_regs", "phys_fp_regs",
                  "inst_buffer", "itlb_entries", "dtlb_entries", "ras", "reg_windows", "mem_ports"):
            v = getattr(self, k)
            if not isinstance(v, (int, float)) or v < 0:
                raise ValueError(f"core.{k}={v!r} is out of range: allowed >= 0")
        for c in (self.icache, self.dcache, self.btb) + ((self.l2,) if self.l2 else ()):
            c.validate()


@dataclass
class NocConfig:
    """``kind`` 'bus' (McPAT type 0) or 'mesh'/'ring'/'router' (routers and links, McPAT type 1)."""

    name: str = "noc"
    kind: str = "mesh"
    nodes_x: int = 1
    nodes_y: int = 1
    in_ports: int = 5
    out_ports: int = 5
    vcs: int = 2
    buffer_entries: int = 4
    flit_bits: int = 128
    clock_MHz: float | None = None
    link_throughput: float = 1.0
    link_latency: float = 1.0
    global_link: bool = False
    chip_coverage: float = 1.0
    routed_over: float = 0.5
    duty_cycle: float = 1.0
    count: int = 1


@dataclass
class MemCtrlConfig:
    count: int = 0                      # memory controllers
    channels_per_mc: int = 1
    io_clock_MHz: float = 800.0         # DIMM bus clock
    peak_MBps: float = 12800.0          # per channel
    databus_bits: int = 64
    addrbus_bits: int = 32
    ranks: int = 2
    low_power: bool = False
    with_phy: bool = False
    lvds: bool = True                   # a high-performance controller's PHY signals differentially (McPAT's LVDS,
    #                                     its default): 10 instead of 40 mW per Gb/s at 90 nm
    req_window: int = 32
    io_buffer: int = 32
    block_B: int = 64


@dataclass
class DramDevice:
    """One DRAM device's datasheet currents (mA) and timings (ns)."""

    name: str
    vdd: float
    idd0: float
    idd2n: float
    idd3n: float
    idd4r: float
    idd4w: float
    idd5b: float
    tck_ns: float
    trc_ns: float
    tras_ns: float
    trfc_ns: float
    trefi_ns: float
    burst: int = 8
    width_bits: int = 8
    vpp: float = 0.0
    ipp0: float = 0.0
    ipp3n: float = 0.0
    io_pj_per_bit: float = 5.0          # I/O and termination energy per bit transferred (assumed)
    density_gbit: float = 0.0           # the device's capacity, Gbit (0: not given; then no capacity is priced)


@dataclass
class DramConfig:
    device: DramDevice
    channels: int = 1
    ranks_per_channel: int = 2
    devices_per_rank: int = 8           # x8 devices on a 64-bit channel; ECC devices, when there are, counted too
    data_bits: int = 64                 # a channel's data bus (DDR3/DDR4 DIMMs: 64 bits, ECC's 8 besides)

    @property
    def data_devices_per_rank(self) -> int:
        """The devices of a rank that hold data: the data bus over the device's width (x8 on 64 bits: 8)."""
        return self.data_bits // self.device.width_bits

    @property
    def ecc_devices_per_rank(self) -> int:
        """A rank's devices beyond the data bus's (ECC: 1 x8 or 2 x4 devices on a 72-bit rank)."""
        return self.devices_per_rank - self.data_devices_per_rank

    @property
    def capacity_bytes(self) -> int:
        """The memory the priced devices hold for data (ECC devices hold check bits, not data), bytes: channels x
        ranks x data devices x density. 0 when the device's density is not given."""
        data_bits = self.channels * self.ranks_per_channel * self.data_devices_per_rank * self.device.density_gbit
        return int(data_bits * 2**30) // 8


@dataclass
class NicConfig:
    """NICs: MAC, PHY (SerDes), packet buffers and DMA engines. ``on_die`` NICs count in the die's area."""

    count: int = 0
    ports: int = 1
    port_gbps: float = 10.0
    buffer_KB: int = 512
    queues: int = 64
    clock_MHz: float = 350.0
    low_power: bool = False
    on_die: bool = True
    duty_cycle: float = 1.0
    load: float = 0.7


@dataclass
class PcieConfig:
    count: int = 0
    lanes: int = 8
    gen: int = 2
    with_phy: bool = True
    clock_MHz: float = 350.0
    low_power: bool = False
    duty_cycle: float = 1.0
    load: float = 0.7


@dataclass
class DieConfig:
    """A product's published die (``power.die``): what its silicon holds beyond the structures priced."""

    node_nm: float                      # the process it is published at
    area_mm2: float                     # the whole die
    tiles: int                          # core tiles on the die (a core, its LLC slice and ring stop)
    transistors: float                  # on the whole die
    tile_mm2: float                     # one tile
    tile_transistors: float             # in one tile

    def validate(self) -> None:
        _positive("die", area_mm2=self.area_mm2, transistors=self.transistors, tile_mm2=self.tile_mm2,
                  tile_transistors=self.tile_transistors)
        if not isinstance(self.tiles, int) or self.tiles < 1:
            raise ValueError(f"die.tiles={self.tiles!r} is out of range: allowed integer >= 1")
        if self.tiles * self.tile_mm2 > self.area_mm2 or self.tiles * self.tile_transistors > self.transistors:
            raise ValueError(f"die: {self.tiles} tiles of {self.tile_mm2:g} mm^2 and {self.tile_transistors:.3g} "
                             f"transistors exceed the die's {self.area_mm2:g} mm^2 and {self.transistors:.3g}")


@dataclass
class Platform:
    """One socket."""

    name: str
    node_nm: float
    device: str = "hp"
    part: str = ""                      # the product every socket of a system is (keys published figures); "": name
    temperature_K: float = 360.0
    long_channel: bool = False
    clock_MHz: float = 2000.0           # core (and default uncore) clock
    vdd: float | None = None            # core supply; None: nominal of the node and device type
    cores: int = 1
    core: CoreConfig = field(default_factory=CoreConfig)
    caches: list[CacheConfig] = field(default_factory=list)          # shared caches (L2/L3 slices)
    directories: list[DirectoryConfig] = field(default_factory=list)
    nocs: list[NocConfig] = field(default_factory=list)
    mc: MemCtrlConfig = field(default_factory=MemCtrlConfig)
    dram: DramConfig | None = None
    memory: str = "ddr"                 # what backs the caches (System.memory.kind): 'ddr', 'dram3d' or 'flash'
    nic: NicConfig = field(default_factory=NicConfig)
    pcie: PcieConfig = field(default_factory=PcieConfig)
    power_gating: bool = False
    uncore_clock_MHz: float | None = None   # None: core clock
    tdp_W: float | None = None              # the socket's power budget, for the TDP check
    # per-core clocks (MHz), one per core, when the cores do not all run at clock_MHz (per-core DVFS); priced by
    # power.price_run with each core's supply from the V-f relation (power.dvfs)
    core_clocks_MHz: tuple[float, ...] | None = None
    # the system-wide numbers of this socket's NICs (their stats are system.nic{n}); None: 0 .. nic.count - 1
    nic_indices: tuple[int, ...] | None = None
    # the product's published die (power.die), priced beyond the structures above; None: the structures only. Not
    # McPAT's: the XML export leaves it out, so every comparison with McPAT is of the structures alone
    die: DieConfig | None = None

    def validate(self) -> None:
        if self.device not in DEVICE_TYPES:
            raise ValueError(f"device={self.device!r} is unknown: allowed {', '.join(DEVICE_TYPES)}")
        if not isinstance(self.cores, int) or self.cores < 0:
            raise ValueError(f"cores={self.cores!r} is out of range: allowed integer >= 0")
        if not (1.0 <= self.clock_MHz <= 20000.0):
            raise ValueError(f"clock_MHz={self.clock_MHz!r} is out of range: allowed 1 to 20000 MHz")
        if self.core_clocks_MHz is not None and len(self.core_clocks_MHz) != self.cores:
            raise ValueError(f"core_clocks_MHz has {len(self.core_clocks_MHz)} entries: allowed exactly {self.cores} "
                             "(one per core)")
        if self.vdd is not None and not (0.2 <= self.vdd <= 2.5):
            raise ValueError(f"vdd={self.vdd!r} is out of range: allowed 0.2 to 2.5 V")
        self.core.validate()
        if self.die is not None:
            self.die.validate()
            if self.die.node_nm != self.node_nm:
                raise ValueError(f"die: published at {self.die.node_nm:g} nm, the platform is at {self.node_nm:g} nm "
                                 "(a part moved to another node has no published die: set die=None)")
        for c in self.caches:
            c.validate()
        for d in self.directories:
            _check_device(f"directory {d.name}", d.device)
