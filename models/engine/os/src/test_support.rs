//! A process with one hart and fresh memory, for the Linux calls' unit tests.

use kvsim_isa::hart::Hart;
use kvsim_isa::memory::Memory;
use kvsim_timing::numa::NumaMap;

use crate::fs::{FileSystem, FsConfig};
use crate::process::Threads;
use crate::process::{Linux, Process};

/// Where the test process's heap starts (its break).
pub const HEAP: u64 = 0x10_0000;

pub struct Fixture {
    pub process: Process,
    pub harts: Vec<Hart>,
    pub mem: Memory,
}

impl Fixture {
    /// One hart of a Linux process (thread-local storage), 64 MiB of memory, the file tree `fs`.
    pub fn new(fs: &FsConfig) -> Fixture {
        let mut mem = Memory::new(64 << 20, false, 1);
        mem.regions.heap_start = HEAP;
        mem.regions.brk = HEAP;
        let process = Process {
            stdout: Vec::new(),
            stderr: Vec::new(),
            group_exit: None,
            mmap_low: kvsim_base::abi::MMAP_TOP,
            numa: NumaMap::new(1),
            hart_socket: vec![0],
            huge: Vec::new(),
            huge_pending: Vec::new(),
            huge_heap: Vec::new(),
            numa_pending: Vec::new(),
            rng: 1,
            stack_size: 1 << 20,
            threads: Threads::new(1, true),
            fs: FileSystem::new(fs).expect("the test's file tree"),
        };
        Fixture { process, harts: vec![Hart::new(0, 0x10000, 0x3f_ffff_0000, 1_000_000_000)], mem }
    }

    pub fn linux(&mut self) -> Linux<'_> {
        Linux { process: &mut self.process, harts: &mut self.harts, mem: &mut self.mem }
    }

    /// Call `nr` with `a`; the value it leaves in a0 (panics if the call stops the run or leaves a0 alone).
    pub fn call(&mut self, nr: u64, a: [u64; 6]) -> u64 {
        self.linux().call(0, nr, a).expect("the call returns").expect("a result in a0")
    }
}
