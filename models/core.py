"""Parameters of a core's timing model (read by kvsim-timing's `core.rs`).

Defaults describe the billion-RPS target's core (out-of-order, 3-issue, 64-entry ROB, 2.5 GHz; the paper's
Section 6). Values the paper does not give are marked "assumed" in their doc.
"""

from __future__ import annotations

from .params import Param, ParamError, SimObject
from .tlb import Mmu


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


class Core(SimObject):
    """One core's timing model: pipeline widths, window, queues, functional units, branch predictor, clock."""

    model = Param.Enum("ooo", "timing model: 'ooo' issues out of order from the ROB; 'inorder' issues in program "
                       "order (Cortex-A7 class), still completing out of order under cache misses",
                       choices=("ooo", "inorder"))
    clock = Param.Freq("2.5GHz", "core clock; cycles convert to ticks (ps) by its period, per core (DVFS)",
                       min="100MHz", max="10GHz")
    fetch_width = Param.Count(3, "instructions fetched, decoded and dispatched (renamed) per cycle (assumed = "
                              "issue width)", min=1, max=16)
    issue_width = Param.Count(3, "instructions issued to functional units per cycle", min=1, max=16)
    commit_width = Param.Count(3, "instructions committed per cycle (assumed = issue width)", min=1, max=16)
    rob_entries = Param.Count(64, "reorder-buffer entries: instructions in flight from dispatch to commit "
                              "(1 = in-order issue, nothing overlaps)", min=1, max=1024)
    lq_entries = Param.Count(32, "load-queue entries, held from dispatch to commit (assumed)", min=1, max=512)
    sq_entries = Param.Count(24, "store-queue/store-buffer entries, held from dispatch until the store is written "
                             "to the L1D after commit (assumed)", min=1, max=512)
    scheduler_entries = Param.Count(0, "unified scheduler (reservation station) entries: an instruction holds one "
                                    "from dispatch until the cycle it issues, and dispatch waits for a free one "
                                    "(Sandy Bridge and Ivy Bridge: 54, Intel); 0: no scheduler bound, the ROB alone "
                                    "bounds what waits to issue", min=0, max=1024)
    int_rename_registers = Param.Count(0, "integer physical registers free for renaming (the integer register file "
                                       "less the architectural registers it holds): an instruction writing an "
                                       "integer register holds one from dispatch until it commits (the mapping it "
                                       "replaces is freed then), and dispatch waits for a free one; 0: no bound",
                                       min=0, max=4096)
    alias_4k_penalty = Param.Count(0, "cycles a load is delayed when the youngest older store still in the store "
                                   "buffer whose address matches it in bits 11:0 (a 4 KB offset apart) does not "
                                   "overlap it: the memory-order buffer compares only those bits, so the false "
                                   "dependence blocks the load until it is reissued (Intel's '4K aliasing'); 0: "
                                   "loads are compared with stores on whole addresses", min=0, max=100)
    # The front end's decoded-uop cache and legacy decoders (Sandy Bridge and Ivy Bridge; models/timing/src/core/
    # frontend.rs says how an RV64 stream maps onto them). All 0: fetch delivers `fetch_width` instructions a cycle
    # wherever they lie, a taken branch ending the group (the core before session 19).
    fetch_block_bytes = Param.Count(0, "the legacy decode pipeline's predecoder marks one aligned block of this many "
                                    "bytes a cycle (at most 6 instructions), and an instruction is decoded no earlier "
                                    "than the cycle its block is marked (Sandy Bridge and Ivy Bridge: 16, Intel); "
                                    "with a decoded-uop cache, only the instructions it misses take this path; 0: no "
                                    "block bound", min=0, max=4096)
    uop_cache_sets = Param.Count(0, "sets of the decoded-uop cache, indexed by the instruction's aligned window "
                                 "(Sandy Bridge and Ivy Bridge: 32); 0: no uop cache (every instruction is decoded "
                                 "as `fetch_block_bytes` says)", min=0, max=4096)
    uop_cache_ways = Param.Count(8, "ways per set of the decoded-uop cache (Sandy Bridge and Ivy Bridge: 8)",
                                 min=1, max=64)
    uop_cache_way_uops = Param.Count(6, "uops one way of the decoded-uop cache holds (Sandy Bridge and Ivy Bridge: "
                                     "6; a jump ends a way)", min=1, max=64)
    uop_cache_window_bytes = Param.Count(32, "the aligned code window whose uops a set's ways hold together (Sandy "
                                         "Bridge and Ivy Bridge: 32 bytes)", min=4, max=256)
    uop_cache_window_ways = Param.Count(3, "ways one window may take at most; a window needing more is not cached "
                                        "and always decoded (Sandy Bridge and Ivy Bridge: 3, so 18 uops)",
                                        min=1, max=64)
    int_alus = Param.Count(3, "integer ALUs (also resolve branches and jumps)", min=1, max=16)
    int_alu_latency = Param.Count(1, "integer ALU latency in cycles", min=1, max=100)
    mul_units = Param.Count(1, "pipelined integer multipliers (assumed)", min=1, max=16)
    mul_latency = Param.Count(3, "integer multiply latency in cycles (Ivy Bridge imul: 3)", min=1, max=100)
    div_units = Param.Count(1, "integer dividers, not pipelined (assumed)", min=1, max=16)
    div_latency = Param.Count(20, "integer divide latency in cycles; the divider is busy throughout (assumed)",
                              min=1, max=200)
    # Floating-point units (F/D). Latencies are Ivy Bridge's SSE2 scalar figures from Agner Fog's instruction
    # tables (ADDSD 3, MULSD 5, CVTSI2SD/CVTSD2SI 4, DIVSD 10-20, SQRTSD 10-21; the worst case is taken for the
    # unpipelined divider); Ivy Bridge has no FMA, so the FMA latency is Haswell's VFMADD (5).
    fp_units = Param.Count(2, "pipelined FP units for add/sub/compare/min/max/sign/move/convert, multiply and FMA "
                           "(Ivy Bridge: one add and one multiply port; assumed interchangeable)", min=1, max=16)
    fp_add_latency = Param.Count(3, "FP add/sub/compare/min/max/sign-injection/move latency in cycles "
                                 "(Ivy Bridge ADDSD: 3)", min=1, max=100)
    fp_mul_latency = Param.Count(5, "FP multiply latency in cycles (Ivy Bridge MULSD: 5)", min=1, max=100)
    fp_fma_latency = Param.Count(5, "FP fused multiply-add latency in cycles (Haswell VFMADD: 5; assumed for a "
                                 "core of Ivy Bridge's class)", min=1, max=100)
    fp_cvt_latency = Param.Count(4, "FP/integer and single/double conversion latency in cycles "
                                 "(Ivy Bridge CVTSI2SD: 4)", min=1, max=100)
    fp_div_units = Param.Count(1, "FP dividers (also square root), not pipelined (assumed)", min=1, max=16)
    fp_div_latency = Param.Count(20, "FP divide latency in cycles; the divider is busy throughout (Ivy Bridge "
                                 "DIVSD: 10-20, worst case)", min=1, max=200)
    fp_sqrt_latency = Param.Count(21, "FP square-root latency in cycles; uses the divider (Ivy Bridge SQRTSD: "
                                  "10-21, worst case)", min=1, max=200)
    load_ports = Param.Count(2, "loads (and prefetches) issued per cycle", min=1, max=8)
    store_ports = Param.Count(1, "store-address/data issues per cycle", min=1, max=8)
    store_address_on_load_ports = Param.Bool(False, "a store's address is computed on a load port: each store "
                                             "takes a load-port slot as well as a store port in the cycle it issues "
                                             "(Sandy Bridge and Ivy Bridge: ports 2 and 3 generate load and store "
                                             "addresses, port 4 takes store data, so loads and stores together "
                                             "issue at most 2 a cycle); off: separate store ports")
    tso_fences = Param.Bool(False, "a RISC-V fence whose orderings a TSO core keeps by itself (Intel's SDM vol. 3A "
                            "8.2.2: reads not reordered with reads, writes not reordered with writes or older reads; "
                            "so every ordering but a write before a later read: fence r,r; w,o; r,rw; rw,w; "
                            "fence.tso) executes as an ALU operation, without waiting for older instructions to "
                            "commit or the store buffer to drain; PAUSE keeps its wait. Only the fence's wait goes: "
                            "the core still issues loads out of order, and a TSO core is assumed to pay nothing for "
                            "the orderings it keeps (no memory-ordering machine clears). Off: every fence serialises "
                            "(waits for older commits and the store buffer)")
    ordered_uncached_stores = Param.Bool(False, "a store to an uncached device register (a doorbell) is sent only "
                                         "once it has committed and every older store has left the store buffer, "
                                         "and holds the buffer's head for its register trip (System.nics' "
                                         "mmio_latency) from then: x86's UC memory type, which DPDK's uio mapping "
                                         "of the NIC's registers gets (Intel's SDM vol. 3A 11.3: UC reads and writes "
                                         "are not speculative and appear on the bus in program order; AMD's APM "
                                         "vol. 2 7.4: a UC access first drains the write buffers). Off: the trip "
                                         "starts when the store issues, overlapping its wait to commit and the older "
                                         "stores' drain")
    branch_units = Param.Count(0, "units that execute branches and jumps; each takes one of them as well as an "
                               "integer ALU in the cycle it issues (Sandy Bridge and Ivy Bridge: one, on port 5); "
                               "0: any integer ALU resolves them", min=0, max=16)
    bpred = Param.Enum("gshare", "conditional-branch direction predictor: 'gshare' (global history XOR PC), "
                       "'bimodal' (PC only), 'perfect' (never mispredicts)",
                       choices=("gshare", "bimodal", "perfect"))
    bpred_entries = Param.Count(4096, "2-bit counters in the direction predictor (power of two; assumed)",
                                min=16, max=1 << 22)
    bpred_history_bits = Param.Count(12, "global-history bits gshare folds into its index (assumed)",
                                     min=0, max=30)
    btb_entries = Param.Count(2048, "branch-target-buffer entries for indirect jumps (power of two, 0 = none, "
                              "every indirect jump mispredicts; assumed)", min=0, max=1 << 20)
    ras_entries = Param.Count(16, "return-address-stack entries (0 = none; assumed)", min=0, max=256)
    mispredict_penalty = Param.Count(14, "cycles from a mispredicted branch's resolution to the dispatch of the "
                                     "right path (front-end refill; assumed, Ivy Bridge is ~14-17)",
                                     min=0, max=100)
    # Address translation (models/tlb.py): TLBs, paging-structure caches and the page walker; off by default.
    mmu = Param.Child(Mmu, "TLBs and page walks (models/tlb.py); off unless the platform turns them on")

    def validate(self) -> None:
        super().validate()
        if not _is_pow2(self.bpred_entries):
            raise ParamError(f"Core.bpred_entries = {self.bpred_entries}: must be a power of two")
        if self.btb_entries and not _is_pow2(self.btb_entries):
            raise ParamError(f"Core.btb_entries = {self.btb_entries}: must be 0 or a power of two")
        if self.fetch_block_bytes and not _is_pow2(self.fetch_block_bytes):
            raise ParamError(f"Core.fetch_block_bytes = {self.fetch_block_bytes}: must be 0 or a power of two")
        if self.uop_cache_sets:
            if not _is_pow2(self.uop_cache_sets):
                raise ParamError(f"Core.uop_cache_sets = {self.uop_cache_sets}: must be 0 or a power of two")
            if not _is_pow2(self.uop_cache_window_bytes):
                raise ParamError(f"Core.uop_cache_window_bytes = {self.uop_cache_window_bytes}: must be a power of "
                                 f"two")
            if self.uop_cache_window_ways > self.uop_cache_ways:
                raise ParamError(f"Core.uop_cache_window_ways = {self.uop_cache_window_ways} exceeds the "
                                 f"{self.uop_cache_ways} ways of a set")
            if not self.fetch_block_bytes:
                raise ParamError("Core.uop_cache_sets is set but fetch_block_bytes is 0: the uop cache's misses "
                                 "are decoded by the legacy pipeline, which needs its block size")
