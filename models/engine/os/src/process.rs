//! The state of the guest's Linux process, which the engine's `Machine` owns and the Linux calls change.

use kvsim_isa::hart::Hart;
use kvsim_isa::memory::Memory;
use kvsim_timing::numa::NumaMap;

use crate::fs::FileSystem;

/// What a Linux process has beyond its harts and memory.
pub struct Process {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// exit_group's status, once called.
    pub group_exit: Option<i64>,
    /// Lowest address handed out by the mmap allocator so far (it grows down from MMAP_TOP).
    pub mmap_low: u64,
    /// Which socket's memory holds each guest address (NUMA allocations, the harts' stacks); the timing side's
    /// memory system finds each line's home socket from it.
    pub numa: NumaMap,
    /// The socket of each hart (EngineConfig.hart_socket): SOCKET_OF and ALLOC_LOCAL read it.
    pub hart_socket: Vec<u16>,
    /// The guest's hugepage memory (ALLOC_LOCAL / ALLOC_ON: the heaps' pages and the blocks of HUGE_PAGE bytes or
    /// more), 2 MB-aligned [start, end) ranges, and those the running hook has not been told of yet.
    pub huge: Vec<(u64, u64)>,
    pub huge_pending: Vec<(u64, u64)>,
    /// Each socket's hugepage heap (ALLOC_LOCAL / ALLOC_ON): its free space [lowest byte, end), blocks being carved
    /// from the end down and the heap growing by pages mapped below its lowest byte; (0, 0) before its first page
    /// (indexed by socket; shorter than the socket count until used). A checkpoint from before the heap grew
    /// (session 7's packing, [next free byte, end of its page)) holds the same free space, so it restores as is.
    pub huge_heap: Vec<(u64, u64)>,
    /// Placements made by a system call that the running hook has not been told of yet (`place_numa`).
    pub numa_pending: Vec<(u64, u64, u16)>,
    /// getrandom's generator state (from System.seed).
    pub rng: u64,
    pub stack_size: u64,
    /// Threads of a Linux process (clone, futex, thread exit).
    pub threads: Threads,
    /// The guest's file tree and file descriptors (Workload.files, scratch, stdin).
    pub fs: FileSystem,
}

impl Process {
    /// Place guest addresses [start, start + len) on `socket`'s memory; the running timing hook hears of it at its
    /// next turn (`numa_pending`).
    pub fn place_numa(&mut self, start: u64, len: u64, socket: u16) -> Result<(), String> {
        self.numa.place(start, len, socket)?;
        self.numa_pending.push((start, len, socket));
        Ok(())
    }

    /// Bytes and ranges of guest address space placed on each socket (NUMA allocations and stacks).
    pub fn numa_stats(&self) -> Vec<(String, u64, &'static str)> {
        let sockets = self.numa.sockets() as usize;
        let (mut bytes, mut ranges) = (vec![0u64; sockets], vec![0u64; sockets]);
        for &(s, e, k) in self.numa.ranges() {
            bytes[k as usize] += e - s;
            ranges[k as usize] += 1;
        }
        let mut out = Vec::with_capacity(2 * sockets);
        for k in 0..sockets {
            out.push((
                kvsim_params::paths::numa(k) + "bytes_placed",
                bytes[k],
                "guest address space placed in this socket's memory (NUMA allocations, stacks; the rest is on socket 0)",
            ));
            out.push((kvsim_params::paths::numa(k) + "ranges", ranges[k], "address ranges placed on this socket"));
        }
        out
    }
}

/// What a Linux call works on: the process, its harts and guest memory, borrowed from the machine for one call.
pub struct Linux<'a> {
    pub process: &'a mut Process,
    pub harts: &'a mut [Hart],
    pub mem: &'a mut Memory,
}

/// Per-process thread state.
#[derive(Debug, Clone, Default)]
pub struct Threads {
    /// Linux process model (only hart 0 starts; the others wait for clone).
    pub linux: bool,
    /// Per hart: the address set_tid_address / CLONE_CHILD_CLEARTID gave (cleared and woken at thread exit).
    pub clear_child_tid: Vec<u64>,
}

impl Threads {
    pub fn new(harts: usize, linux: bool) -> Threads {
        Threads { linux, clear_child_tid: vec![0; harts] }
    }
}
