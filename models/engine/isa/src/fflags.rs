//! The fflags bits of fcsr (the RISC-V F extension): shared by the software FPU and its host fast path.

/// Inexact.
pub const NX: u32 = 0x01;
/// Underflow.
pub const UF: u32 = 0x02;
/// Overflow.
pub const OF: u32 = 0x04;
/// Divide by zero.
pub const DZ: u32 = 0x08;
/// Invalid operation.
pub const NV: u32 = 0x10;
