//! The bottom of kvsim's engine: what every other engine crate may use and nothing above it defines.
//!
//! - `abi`: the workload ABI's constants (memory map, Linux call and simulator call numbers, call names);
//! - `error`: every way a run can fail (`SimError`, `FaultKind`);
//! - `output`: a run's result (statistics, stop reason, per-hart summary);
//! - `random`: the deterministic generator behind getrandom and the client;
//! - `frame`: Ethernet frame facts shared by the NICs and the client (sizes, wire overhead, the UDP port field);
//! - `syscall_table`: every Linux call SE mode knows, with its status (workloads/SYSCALLS.md is rendered from it).

pub mod abi;
pub mod error;
pub mod frame;
pub mod output;
pub mod random;
pub mod syscall_table;
