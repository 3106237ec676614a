//! The core's named statistics: its own counters and the per-structure access counts the power model reads.
//! Apart from the timing so `core.rs` holds the pipeline alone.

use super::Core;
use crate::{ratio, StatSink};

impl Core {
    /// Named statistics under `prefix` (e.g. "system.core0."), counted since the last stats reset. Besides the
    /// model's own counters it derives the per-structure access counts the power model reads (power/activity.py):
    /// ROB reads/writes (one each per instruction), rename and register-file reads/writes (source and
    /// destination operands), issue-queue writes/reads (instructions through the scheduler) and wakeups (results
    /// broadcast), BTB reads (branches and jumps) and writes (mispredictions). RV64IMAC has no floating point, so
    /// the FP counters are 0.
    pub fn stats(&self, prefix: &str, out: &mut StatSink) {
        let s = &self.stats;
        let cycles = self.measured_cycles() as f64;
        let insts = s.insts as f64;
        out.add(prefix, "committed_insts", insts, "instructions committed");
        out.add(prefix, "cycles", cycles, "cycles to the last commit");
        out.add(prefix, "ipc", ratio(insts, cycles), "instructions per cycle");
        out.add(prefix, "cpi", ratio(cycles, insts), "cycles per instruction");
        out.add(prefix, "clock", self.clock.freq_hz() as f64, "current clock, Hz");
        let fp_ops = (s.fp_add_ops() + s.fp_mul_ops() + s.fp_fma_ops() + s.fp_cvt_ops() + s.fp_div_ops()) as f64;
        out.add(
            prefix,
            "int_ops",
            insts - s.nops() as f64 - fp_ops,
            "integer instructions (all but FP, no-ops, hints)",
        );
        out.add(prefix, "fp_ops", fp_ops, "F/D computational instructions (not FP loads and stores)");
        out.add(prefix, "fp_add_ops", s.fp_add_ops() as f64, "FP add/sub/compare/min/max/sign-injection/moves");
        out.add(prefix, "fp_mul_ops", s.fp_mul_ops() as f64, "FP multiplies");
        out.add(prefix, "fp_fma_ops", s.fp_fma_ops() as f64, "FP fused multiply-adds");
        out.add(prefix, "fp_cvt_ops", s.fp_cvt_ops() as f64, "FP conversions");
        out.add(prefix, "fp_div_ops", s.fp_div_ops() as f64, "FP divides and square roots");
        out.add(prefix, "alu_ops", s.alu_ops() as f64, "integer ALU instructions (not branches or jumps)");
        out.add(prefix, "mul_ops", (s.mul_ops() + s.div_ops()) as f64, "multiplies and divides");
        out.add(prefix, "div_ops", s.div_ops() as f64, "divides and remainders");
        out.add(prefix, "loads", s.loads() as f64, "loads executed");
        out.add(prefix, "stores", s.stores() as f64, "stores executed");
        out.add(prefix, "atomics", s.atomics() as f64, "atomic memory operations executed");
        out.add(prefix, "prefetches", s.prefetches() as f64, "software prefetches executed");
        out.add(prefix, "fences", s.fences() as f64, "fences");
        out.add(prefix, "system_ops", s.system_ops() as f64, "ecall, ebreak and CSR instructions (serialising)");
        out.add(prefix, "nops", s.nops() as f64, "no-ops and NTL hints");
        out.add(prefix, "forwarded_loads", s.forwarded_loads as f64, "loads served by store-to-load forwarding");
        out.add(
            prefix,
            "forward_blocked_loads",
            s.forward_blocked_loads as f64,
            "loads partly overlapping an undrained store: they waited for it to drain",
        );
        if self.alias_pen != 0 {
            out.add(prefix, "aliased_loads", s.aliased_loads as f64, "loads reissued after a false 4K alias");
        }
        out.add(
            prefix,
            "load_latency_avg",
            ratio(s.load_latency_sum as f64, s.loads() as f64),
            "cycles from issue to data, per load",
        );
        out.add(prefix, "branches", s.branches() as f64, "conditional branches");
        out.add(prefix, "jumps", s.jumps() as f64, "jumps, calls and returns");
        out.add(prefix, "branch_mispredicts", s.mispredicts as f64, "mispredicted branches and jumps");
        out.add(
            prefix,
            "mispredict_rate",
            ratio(s.mispredicts as f64, (s.branches() + s.jumps()) as f64),
            "mispredicts / (branches + jumps)",
        );
        out.add(prefix, "icache_stall_cycles", s.icache_stall_cycles as f64, "fetch cycles lost to L1I misses");
        if let Some(fe) = &self.fe {
            fe.write_stats(prefix, out);
        }
        out.add(prefix, "idle_poll_cycles", s.idle_poll_cycles as f64, "cycles of the polls that found no frame");
        out.add(
            prefix,
            "serialize_commit_wait_cycles",
            s.serialize_commit_wait_cycles as f64,
            "cycles fences and system instructions waited, past their operands, for older instructions to commit",
        );
        out.add(
            prefix,
            "serialize_drain_wait_cycles",
            s.serialize_drain_wait_cycles as f64,
            "cycles fences and system instructions then waited for older stores to leave the store buffer",
        );
        out.add(
            prefix,
            "store_queue_stall_cycles",
            s.store_queue_stall_cycles as f64,
            "dispatch cycles stores lost waiting for a store-queue entry (summed over stores; counted before the \
             scheduler and rename bounds and the dispatch width apply, so it can overlap their stalls)",
        );
        // Only where the core bounds them, so a core without these bounds keeps its statistics as they were.
        if self.sched_cap != 0 {
            out.add(
                prefix,
                "scheduler_stall_cycles",
                s.scheduler_stall_cycles as f64,
                "dispatch cycles lost waiting for a scheduler entry (summed over instructions)",
            );
        }
        if !self.rename.is_empty() {
            out.add(
                prefix,
                "rename_stall_cycles",
                s.rename_stall_cycles as f64,
                "dispatch cycles lost waiting for an integer rename register (summed over instructions)",
            );
        }
        out.add(prefix, "rob_occupancy_avg", ratio(s.rob_occupancy_sum as f64, cycles), "average ROB entries in use");
        out.add(
            prefix,
            "lq_occupancy_avg",
            ratio(s.lq_occupancy_sum as f64, cycles),
            "average load-queue entries in use",
        );
        out.add(
            prefix,
            "sq_occupancy_avg",
            ratio(s.sq_occupancy_sum as f64, cycles),
            "average store-queue entries in use",
        );
        let issued = insts - s.nops() as f64;
        let (src, dst) = (s.src_operands as f64, s.dst_operands as f64);
        let derived: [(&str, f64, &str); 16] = [
            ("rob_reads", insts, "ROB reads (one per committed instruction; derived)"),
            ("rob_writes", insts, "ROB writes (one per dispatched instruction; derived)"),
            ("rename_reads", src, "rename-table reads: source operands (derived)"),
            ("rename_writes", dst, "rename-table writes: destination operands (derived)"),
            ("iq_writes", issued, "issue-queue writes: instructions entering the scheduler (derived)"),
            ("iq_reads", issued, "issue-queue reads: instructions issued (derived)"),
            ("iq_wakeups", dst, "issue-queue wakeups: results broadcast (derived)"),
            ("int_rf_reads", src, "integer register-file reads (derived)"),
            ("int_rf_writes", dst, "integer register-file writes (derived)"),
            ("btb_reads", (s.branches() + s.jumps()) as f64, "BTB lookups: branches and jumps (derived)"),
            ("btb_writes", s.mispredicts as f64, "BTB/predictor updates on mispredictions (derived)"),
            ("fp_rename_reads", 0.0, "FP rename reads (none)"),
            ("fp_rename_writes", 0.0, "FP rename writes (none)"),
            ("fp_iq_reads", 0.0, "FP issue-queue reads (none)"),
            ("fp_iq_writes", 0.0, "FP issue-queue writes (none)"),
            ("fp_iq_wakeups", 0.0, "FP issue-queue wakeups (none)"),
        ];
        for (name, value, desc) in derived {
            out.add(prefix, name, value, desc);
        }
        out.add(prefix, "fp_rf_reads", 0.0, "FP register-file reads (none)");
        out.add(prefix, "fp_rf_writes", 0.0, "FP register-file writes (none)");
        if let Some(m) = &self.mmu {
            m.stats(prefix, out);
        }
    }
}
