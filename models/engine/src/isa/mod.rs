//! The RV64GC instruction set: decoding into a compact form (`decode`) and executing it (`exec`).
#[cfg(test)]
pub mod asm;
pub mod decode;
pub mod exec;
pub mod fpu;
