"""Parameters of the NIC model (read by the engine's `nic.rs`): ports, queues, RX FIFO, steering.

The functional model moves frames between the ghost client and the per-queue RX/TX descriptor rings in guest
memory (workloads/ABI.md, "The NIC"). In detailed timing (System.mode = "detailed", once detailed timing has
started) the NIC is timed too (models/engine/src/nictime.rs): frames are serialized at line rate (frame bytes + 24
bytes of preamble, start delimiter, FCS and inter-frame gap), wait in the bounded RX FIFO (overflow drops), cross the
PCIe link (descriptor fetch, data, descriptor write-back, coalesced per rx_wb_threshold / rx_wb_timer; per-TLP
overhead and latency) and become visible to the guest at their time; TX completion is written back as DD bits or as a head
pointer (tx_completion); NIC DMA writes go to the LLC through DDIO (ddio, ddio_ways) or to memory.

`attach = 'on_die'` makes the NIC an Ethernet MAC on the logic die (Mercury's and Iridium's integrated 10 GbE MAC,
models/engine/src/ondie.rs): the same rings, registers and RX FIFO (the MAC's receive buffer), but its DMA crosses
an on-die bus into the die's memory system instead of a PCIe link, and the statistics show `nicK.on_die.*` instead
of `nicK.pcie.*`. Such a MAC may have a buffer SRAM (sram_size; models/engine/src/macsram.rs) where the guest driver
keeps its rings and packet buffers.
"""

from __future__ import annotations

from .kvd import KvdSwitch
from .params import Param, ParamError, SimObject


class Nic(SimObject):
    """A multiqueue Ethernet NIC: ports, per-queue RX/TX descriptor rings, perfect-match steering, doorbells."""

    socket = Param.Count(0, "socket the NIC is attached to (an existing socket of System.sockets): its DMA enters "
                         "that socket's mesh and its doorbells come from that socket's cores", min=0, max=4095)
    enabled = Param.Bool(False, "simulate the NIC (off: no device registers, the NIC simulator calls report 0 "
                         "queues)")
    ports = Param.Count(1, "Ethernet ports; queues are spread over them in contiguous blocks", min=1, max=64)
    port_gbps = Param.Float(40.0, "line rate of each port in Gbit/s (10, 40, 100 GbE; used by the timing model, "
                            "not the functional one)", min=1.0, max=1000.0)
    queues = Param.Count(0, "queues in all (0 = one per hart); hart i owns queue i when i < queues",
                         min=0, max=1024)
    rx_fifo_frames = Param.Count(512, "frames each port's RX FIFO holds while they wait for a free RX "
                                 "descriptor; a frame arriving at a full FIFO is dropped and counted",
                                 min=1, max=1 << 20)
    # Timing (detailed mode) ------------------------------------------------------------------------------------
    pcie_gen = Param.Count(3, "PCIe generation of the NIC's link (2: 5 GT/s 8b/10b; 3: 8 GT/s, 4: 16 GT/s, 5: 32 GT/s, "
                           "128b/130b); the link is shared by the NIC's ports", min=1, max=5)
    pcie_lanes = Param.Count(8, "PCIe lanes of the NIC's link", min=1, max=32)
    pcie_max_payload = Param.Count(256, "MaxPayloadSize in bytes: the largest TLP payload (DMA writes and read "
                                   "completions split into TLPs of at most this size)", min=128, max=4096)
    # The PCIe protocol (models/engine/devices/src/pcie.rs): every TLP adds 8 bytes of framing, sequence number and
    # LCRC on every generation (gen 1-2: STP 1 + sequence 2 + LCRC 4 + END 1; gen 3+: STP token 4 + LCRC 4) to its
    # header and payload; DLLPs are 8 bytes.
    pcie_addr64 = Param.Bool(True, "requests carry 64-bit addresses: 4-DW (16-byte) headers on memory writes and read "
                             "requests; off: 3-DW (12-byte) headers, as for buffers below 4 GiB. Completions always "
                             "have 3-DW headers")
    pcie_ecrc = Param.Bool(False, "every TLP carries the optional 4-byte end-to-end CRC (ECRC)")
    pcie_max_read_request = Param.Count(512, "MaxReadRequestSize in bytes: a DMA read is split into read requests "
                                        "of at most this size (and at 4 KB boundaries); 512 is the PCIe default "
                                        "of the Device Control register", min=128, max=4096)
    pcie_read_completion_boundary = Param.Count(64, "read completion boundary (RCB) in bytes: the host answers "
                                                "a read request with one completion per RCB-aligned piece (at most "
                                                "max payload each); assumed 64, the root port's RCB, which Intel "
                                                "root complexes answer in cache-line completions", min=64, max=128)
    pcie_ack_latency = Param.Time("240ns", "the receiver's Ack latency window: one Ack DLLP (and one UpdateFC DLLP "
                                  "per flow-control credit type used) per window, acknowledging every TLP received "
                                  "in it. Assumed 240 ns: the base spec's AckNak latency limit ((max payload + 28) "
                                  "x AckFactor / lanes + internal delay symbol times) for 256-byte payloads on a gen "
                                  "2 x8 link, AckFactor 1.4 and 70 symbols of internal delay (2 ns symbols)",
                                  min="1ns", max="100us")
    pcie_read_tags = Param.Count(32, "read requests each port may have outstanding (transaction tags): 32 with the "
                                 "5-bit tag field, extended tags off (the PCIe default); each port is a PCI function "
                                 "of its own, as the 82599's LAN functions are, and the link pools its ports' tags; "
                                 "a read request with every tag in use waits for the oldest outstanding read to "
                                 "complete", min=1, max=2048)
    pcie_latency = Param.Time("400ns", "one-way latency of the PCIe link and root complex for a TLP (assumed "
                              "400 ns)", min="0s", max="100us")
    mmio_latency = Param.Time("100ns", "one-way time of an uncached access to a NIC register (MMIO): a doorbell "
                              "store holds its store-buffer entry this long (from its issue, or, with "
                              "Core.ordered_uncached_stores, from when it is the oldest store) and the NIC starts TX "
                              "work this long after it; a register load waits twice this (assumed 100 ns)",
                              min="0s", max="100us")
    rx_wb_threshold = Param.Count(1, "RX descriptors a queue writes back per PCIe write (WTHRESH of Intel's 82598/"
                                  "82599): completed descriptors wait on the NIC until this many are ready, or "
                                  "until rx_wb_timer, and the guest sees their frames only then; 1: each "
                                  "descriptor is its own write", min=1, max=64)
    rx_wb_timer = Param.Time("0s", "longest a completed RX descriptor waits for its write-back group: when it "
                             "expires the partial group is written (the ITR flush); 0 = no timer, allowed only "
                             "with rx_wb_threshold = 1", min="0s", max="1ms")
    rx_desc_fetch = Param.Count(8, "RX descriptors a queue fetches per PCIe read (one read when the ring index "
                                "reaches a multiple of it): the 82599's RXDCTL.HTHRESH, fetched when fewer than "
                                "PTHRESH remain on the NIC; MICA sets both to 8", min=1, max=64)
    max_ring_descriptors = Param.Count(4096, "the most descriptors an RX or TX ring may have: DPDK's ixgbe "
                                       "poll-mode driver takes 32 to 4,096 (the 82599 itself holds up to 32K - 8 "
                                       "per ring); the KVS server's rx_ring= and tx_ring= must be powers of two "
                                       "within it", min=8, max=1 << 15)
    tx_completion = Param.Enum("descriptor", "how the NIC tells the driver a TX descriptor is done: 'descriptor' "
                               "writes status = DD into each sent descriptor, charged as one 16-byte PCIe write per "
                               "TX batch of a queue (the other DD bits are not charged); 'head_pointer' writes the "
                               "queue's TX head (a 32-bit index) to the host address the driver registered in "
                               "TX_HEAD_WB, as Intel's 82599 does with TDWBAL.Head_WB_En, one 4-byte write per "
                               "batch, and leaves the descriptors alone; 'report_status' writes DD (one 16-byte "
                               "write each) only into descriptors whose cmd has RS, as the 82599 with WTHRESH = 0, "
                               "and the driver asks for it on every 32nd descriptor, as DPDK's ixgbe driver "
                               "(tx_rs_thresh = 32). The driver reads the mode from the TX_COMPLETION register "
                               "(workloads/ABI.md)", choices=("descriptor", "head_pointer", "report_status"))
    ddio = Param.Bool(True, "DDIO (wauDCA): NIC DMA writes allocate or update lines in the LLC within the ddio "
                      "ways, DMA reads are served from the LLC when the line is there; off: DMA writes go to "
                      "memory (invalidating cached copies)")
    ddio_ways = Param.Float(0.1, "fraction of the LLC's ways DDIO may allocate into (at least one way; Intel's "
                            "default is 2 of 20)", min=0.0, max=1.0)
    # Attachment: a PCIe card, or a MAC on the logic die (Mercury, Iridium) -------------------------------------
    attach = Param.Enum("pcie", "how the NIC reaches the cores and memory: 'pcie', a card on its own PCIe link (the "
                        "pcie_* parameters, mmio_latency); 'on_die', an Ethernet MAC with buffers on the processor's "
                        "die, as Mercury's integrated 10 GbE MAC: no PCIe link and no TLPs, its DMA enters the die's "
                        "memory system after on_die_latency over an on-die bus of on_die_bandwidth, its registers "
                        "answer after on_die_mmio_latency, and its RX FIFO (rx_fifo_frames) is the MAC's receive "
                        "buffer", choices=("pcie", "on_die"))
    # Assumed: the MAC sits beside the logic die's memory interfaces, a few cycles of a 1 GHz die away.
    on_die_latency = Param.Time("4ns", "attach = 'on_die': one-way time between the MAC and the die's memory system "
                                "for a DMA transfer (a write arrives this long after it leaves the MAC's bus; a read "
                                "request reaches memory this long after it is issued and its data come back as "
                                "long; assumed 4 ns)", min="0s", max="10us")
    # Assumed: a 128-bit bus at 1 GHz each way, far above a 10 GbE port's 1.25 GB/s.
    on_die_bandwidth = Param.Float(16.0, "attach = 'on_die': GB/s each direction of the bus between the MAC and the "
                                   "die's memory system (no per-transfer overhead; assumed 16: 128 bits at 1 GHz)",
                                   min=0.1, max=10000.0)
    # Assumed: an uncached access to a register on the same die, through its interconnect.
    on_die_mmio_latency = Param.Time("10ns", "attach = 'on_die': one-way time of a core's uncached access to a MAC "
                                     "register (what mmio_latency is for a PCIe NIC; assumed 10 ns)",
                                     min="0s", max="100us")
    # The MAC's buffer SRAM (attach = 'on_die'): where the guest driver may place its rings and packet buffers.
    sram_size = Param.Size(0, "attach = 'on_die': bytes of on-die SRAM beside the MAC at a device address range "
                           "(workloads/ABI.md, 'The MAC's buffer SRAM'), split evenly over the NIC's queues; the "
                           "guest driver places a queue's descriptor rings and packet buffers in its slice, and the "
                           "memory system serves those lines at sram_latency instead of from memory. 0: none, rings "
                           "and buffers live in memory", min=0, max="1GiB")
    # Assumed: a few-MiB SRAM macro at 28 nm answers in about 2 ns (CACTI-class figure, not from the source).
    sram_latency = Param.Time("2ns", "time the MAC's buffer SRAM takes to serve a line to the memory system (a miss "
                              "of a ring or buffer line from the caches; assumed 2 ns)", min="0s", max="1us")
    steering_base_port = Param.Count(0x4000, "UDP destination port of core 0's queue: port base + c steers to "
                                     "core c's queue (perfect-match table)", min=1, max=65535)
    # Zero-copy interface and the KVD switch (models/engine/src/zcnic.rs, kvd.rs) ------------------------------
    interface = Param.Enum("rings", "how the NIC meets the cores: 'rings' (RX/TX descriptor rings over PCIe, DMA "
                           "and DDIO, as above) or 'zero_copy' (KeyVault's NIC on the cache hierarchy: per-queue "
                           "registers and fixed 2 KiB receive and send slots in cacheable memory, no descriptors; "
                           "the NIC writes a frame and its ready word straight into the owning core's caches and "
                           "reads replies from there, mmio_latency is then the on-die trip between the NIC and a "
                           "core, and the pcie_*, rx_wb_* and ddio parameters do not apply). The driver reads it "
                           "from the INTERFACE register (workloads/ABI.md)", choices=("rings", "zero_copy"))
    switch = Param.Child(KvdSwitch, "the key-value distributor switch between the ports and the network "
                         "(KeyVault); off by default")

    @property
    def register_latency(self) -> int:
        """One-way time of an uncached access to the NIC's registers (ps), for its attachment."""
        return self.on_die_mmio_latency if self.attach == "on_die" else self.mmio_latency

    def validate(self) -> None:
        super().validate()
        for name in ("pcie_max_payload", "pcie_max_read_request", "pcie_read_completion_boundary", "rx_desc_fetch",
                     "max_ring_descriptors"):
            v = getattr(self, name)
            if v & (v - 1):
                raise ParamError(f"Nic.{name} = {v} is not a power of two (PCIe sizes are 128 x 2^n bytes, the "
                                 "RCB 64 or 128; rings and descriptor fetches are powers of two)")
        if self.rx_wb_threshold > 1 and self.rx_wb_timer == 0:
            raise ParamError(f"Nic.rx_wb_threshold = {self.rx_wb_threshold} needs Nic.rx_wb_timer > 0: without the "
                             "timer a partial write-back group would never reach the guest")
        if self.interface == "zero_copy" and (self.tx_completion != "descriptor" or self.rx_wb_threshold > 1):
            raise ParamError(f"Nic.interface = 'zero_copy' has no descriptors: Nic.tx_completion must stay "
                             f"'descriptor' (got {self.tx_completion!r}) and Nic.rx_wb_threshold 1 (got "
                             f"{self.rx_wb_threshold})")
        if self.sram_size and self.attach != "on_die":
            raise ParamError(f"Nic.sram_size = {self.sram_size} needs Nic.attach = 'on_die': the buffer SRAM is the "
                             f"integrated MAC's, not a PCIe card's (attach = {self.attach!r})")
        if self.enabled and self.queues and self.queues < self.ports:
            raise ParamError(f"Nic.queues = {self.queues} is fewer than Nic.ports = {self.ports}: every port "
                             "needs a queue")
