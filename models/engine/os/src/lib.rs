//! kvsim's SE mode: the engine plays Linux for the guest program. `process` holds the process state (output
//! streams, exit status, the mmap allocator, the NUMA placements, getrandom's generator, the threads) that the
//! calls change; `linux` performs the Linux calls (workloads/ABI.md) on a `Linux` view of that state, the harts and
//! guest memory; `thread` is clone, futex and thread exit; `numbers` holds the Linux numbers the call families share. `fs` is the guest's file tree and descriptors behind the
//! file calls of `file_calls`; `mem_calls` has mremap, madvise and file mappings. `full_system` is FS mode: a
//! machine that boots a real kernel (or a bare-metal program) with the SBI firmware in the simulator, the CLINT,
//! the PLIC, an NS16550 UART and a generated device tree.

mod file_calls;
pub mod fs;
pub mod full_system;
pub mod linux;
mod mem_calls;
pub mod numbers;
pub mod process;
#[cfg(test)]
mod test_support;
pub mod thread;
