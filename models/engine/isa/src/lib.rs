//! kvsim's RISC-V functional model: harts (`hart`), the decoder (`decode`), the executor (`exec`, its handlers in
//! `handlers`, what it tells a timing model in `hook`) over pre-decoded basic blocks (`blocks`) and its FPU (`fpu`, with `fpu_host` for the common case), sparse guest memory (`memory`)
//! with devices behind the `Mmio` trait (`mmio`), the ELF loader (`elf`) and the traps an instruction can raise
//! (`trap`). `asm` encodes instructions for tests. For full-system mode, `privileged` holds a hart's M/S/U state
//! (CSRs, traps and delegation, interrupts, xret/wfi/sfence.vma) and guest memory translates through Sv39 page
//! tables (`memory`'s `sv39` part) once `Memory::enable_full_system` is called; SE mode never enters either. Nothing
//! here knows of the devices, the operating system or the machine that drives it.

pub mod asm;
pub mod blocks;
pub mod decode;
pub mod elf;
pub mod exec;
#[cfg(test)]
mod exec_tests;
pub mod fflags;
pub mod fpu;
mod fpu_host;
mod handlers;
pub mod hart;
pub mod hook;
mod inst_timing;
pub mod memory;
pub mod mmio;
pub mod page_map;
pub mod privileged;
pub mod trap;
