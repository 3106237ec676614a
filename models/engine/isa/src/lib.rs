//! kvsim's RISC-V functional model: harts (`hart`), the decoder (`decode`), the executor (`exec`) and its FPU
//! (`fpu`), sparse guest memory (`memory`) with devices behind the `Mmio` trait (`mmio`), the ELF loader (`elf`) and
//! the traps an instruction can raise (`trap`). `asm` encodes instructions for tests. Nothing here knows of the
//! devices, the operating system or the machine that drives it.

pub mod asm;
pub mod decode;
pub mod elf;
pub mod exec;
pub mod fpu;
pub mod hart;
pub mod memory;
pub mod mmio;
pub mod trap;
