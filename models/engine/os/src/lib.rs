//! kvsim's SE mode: the engine plays Linux for the guest program. `process` holds the process state (output
//! streams, exit status, the mmap allocator, the NUMA placements, getrandom's generator, the threads) that the
//! calls change; `linux` performs the Linux calls (workloads/ABI.md) on a `Linux` view of that state, the harts and
//! guest memory; `thread` is clone, futex and thread exit.

pub mod linux;
pub mod process;
pub mod thread;
