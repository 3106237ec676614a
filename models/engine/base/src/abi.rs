//! The constants of the workload ABI (`workloads/ABI.md`): memory map, system call and simulator call numbers.
//! Keep this file and ABI.md in step; `workloads/runtime/kvsim.h` mirrors it on the guest side.

/// Guest page size (bytes).
pub const PAGE_SIZE: u64 = 4096;

/// The poll-end hint's immediate: `slti x0, rs1, 0x4b5` (SLTI with rd = x0 is a HINT the RISC-V spec designates for
/// custom use) marks the end of one poll of a server's loop, rs1 holding the frames it found (workloads/ABI.md,
/// "Hints the timing models see"). Functionally a no-op.
pub const POLL_END_HINT: i32 = 0x4b5;
pub const PAGE_SHIFT: u32 = 12;
/// The huge page size: the simulator calls ALLOC_LOCAL and ALLOC_ON serve the runtime's hugepage memory (as DPDK's
/// heap) from runs of contiguous aligned huge pages, which the timing model maps with 2 MB TLB entries.
pub const HUGE_PAGE: u64 = 2 << 20;
/// The smallest alignment of an ALLOC_LOCAL / ALLOC_ON block carved from a socket's hugepage heap: a cache line, so
/// two blocks (two cores' state) never share a line. 64 bytes is the line of every modelled platform and DPDK's
/// rte_malloc minimum (RTE_CACHE_LINE_SIZE); assumed, since the guest runtime does not know the target's line size.
pub const ALLOC_MIN_ALIGN: u64 = 64;

/// Top of hart 0's stack. Hart i's stack top is `STACK_TOP - i * (stack_size + STACK_GUARD)`.
pub const STACK_TOP: u64 = 0x3f_ffff_0000;
/// Unmapped gap below every hart's stack, so an overflow faults.
pub const STACK_GUARD: u64 = 64 * 1024;
/// Anonymous mmap regions are carved downwards from here.
pub const MMAP_TOP: u64 = 0x20_0000_0000;
/// Range reserved for devices (NIC registers), inclusive bounds.
pub const DEVICE_BASE: u64 = 0x30_0000_0000;
pub const DEVICE_END: u64 = 0x30_ffff_ffff;

/// Linux riscv64 (asm-generic) system call numbers the engine implements.
pub mod sys {
    pub const READLINKAT: u64 = 78;
    pub const WRITE: u64 = 64;
    pub const WRITEV: u64 = 66;
    pub const EXIT: u64 = 93;
    pub const EXIT_GROUP: u64 = 94;
    pub const SET_TID_ADDRESS: u64 = 96;
    pub const SET_ROBUST_LIST: u64 = 99;
    pub const CLOCK_GETTIME: u64 = 113;
    pub const UNAME: u64 = 160;
    pub const BRK: u64 = 214;
    pub const MUNMAP: u64 = 215;
    pub const MMAP: u64 = 222;
    pub const MPROTECT: u64 = 226;
    pub const PRLIMIT64: u64 = 261;
    pub const GETRANDOM: u64 = 278;
    pub const RSEQ: u64 = 293;
}

/// Simulator calls: `ecall` with a7 in `SIMCALL_FIRST..=SIMCALL_LAST`.
pub mod simcall {
    pub const FIRST: u64 = 0x4b56_0000;
    pub const LAST: u64 = 0x4b56_00ff;
    pub const HART_ID: u64 = 0x4b56_0000;
    pub const NUM_HARTS: u64 = 0x4b56_0001;
    pub const ROI_BEGIN: u64 = 0x4b56_0002;
    pub const ROI_END: u64 = 0x4b56_0003;
    pub const SOCKET_OF: u64 = 0x4b56_0004;
    pub const ALLOC_LOCAL: u64 = 0x4b56_0005;
    pub const STATS_DUMP: u64 = 0x4b56_0006;
    pub const STATS_RESET: u64 = 0x4b56_0007;
    pub const NIC_NUM_QUEUES: u64 = 0x4b56_0008;
    pub const NIC_QUEUE_OF: u64 = 0x4b56_0009;
    pub const NIC_QUEUE_REGS: u64 = 0x4b56_000a;
    pub const NIC_QUEUE_PORT: u64 = 0x4b56_000b;
    pub const NIC_COUNT: u64 = 0x4b56_000c;
    pub const NIC_QUEUE_NIC: u64 = 0x4b56_000d;
    pub const CHECKPOINT: u64 = 0x4b56_000e;
    pub const ALLOC_ON: u64 = 0x4b56_000f;
    pub const SOCKET_OF_ADDR: u64 = 0x4b56_0010;
    /// (queue) -> base address of the queue's slice of its MAC's buffer SRAM, 0 when the NIC has none.
    pub const NIC_QUEUE_SRAM: u64 = 0x4b56_0020;
    /// (queue) -> bytes of the queue's slice of its MAC's buffer SRAM, 0 when the NIC has none.
    pub const NIC_QUEUE_SRAM_BYTES: u64 = 0x4b56_0021;
}

/// Linux errno values returned (negated) in a0.
pub mod errno {
    pub const ENOENT: i64 = 2;
    pub const EBADF: i64 = 9;
    pub const ENOMEM: i64 = 12;
    pub const ENODEV: i64 = 19;
    pub const EFAULT: i64 = 14;
    pub const EINVAL: i64 = 22;
    pub const ENOSYS: i64 = 38;
}

/// Auxiliary vector keys the initial stack carries.
pub mod auxv {
    pub const AT_NULL: u64 = 0;
    pub const AT_PHDR: u64 = 3;
    pub const AT_PHNUM: u64 = 5;
    pub const AT_PAGESZ: u64 = 6;
    pub const AT_ENTRY: u64 = 9;
    pub const AT_RANDOM: u64 = 25;
}

/// Top of hart `i`'s stack (exclusive) for a given per-hart stack size.
pub fn stack_top(hart: u64, stack_size: u64) -> u64 {
    STACK_TOP - hart * (stack_size + STACK_GUARD)
}

/// Frequency of the `time` CSR (rdtime): 10 MHz, as on QEMU's virt machine; derived from simulated time.
pub const TIMEBASE_HZ: u64 = 10_000_000;

/// Names of Linux calls, for the error that stops a run at one the engine does not implement.
pub use crate::syscall_table::syscall_name;

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn stack_layout_matches_abi() {
        assert_eq!(stack_top(0, 1 << 20), 0x3f_ffff_0000);
        assert_eq!(stack_top(1, 1 << 20), 0x3f_ffff_0000 - (1 << 20) - 65536);
        assert!(MMAP_TOP < DEVICE_BASE && DEVICE_END < stack_top(4095, 1 << 20) - (1 << 20));
    }
}
