//! A few instruction encoders for the engine's unit tests (test builds only).
#![allow(dead_code)]

pub fn r(f7: u32, rs2: u32, rs1: u32, f3: u32, rd: u32, opcode: u32) -> u32 {
    (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | opcode
}
pub fn i(imm: i32, rs1: u32, f3: u32, rd: u32, opcode: u32) -> u32 {
    (((imm as u32) & 0xfff) << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | opcode
}
pub fn s(imm: i32, rs2: u32, rs1: u32, f3: u32) -> u32 {
    let u = imm as u32;
    (((u >> 5) & 0x7f) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | ((u & 0x1f) << 7) | 0x23
}
pub fn b(imm: i32, rs2: u32, rs1: u32, f3: u32) -> u32 {
    let u = imm as u32;
    (((u >> 12) & 1) << 31)
        | (((u >> 5) & 0x3f) << 25)
        | (rs2 << 20)
        | (rs1 << 15)
        | (f3 << 12)
        | (((u >> 1) & 0xf) << 8)
        | (((u >> 11) & 1) << 7)
        | 0x63
}
pub fn lui(rd: u32, imm20: u32) -> u32 {
    (imm20 << 12) | (rd << 7) | 0x37
}
pub fn addi(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, 0, rd, 0x13)
}
pub fn li(rd: u32, imm: i32) -> u32 {
    addi(rd, 0, imm)
}
pub fn ecall() -> u32 {
    0x73
}
pub fn nop() -> u32 {
    0x13
}
pub fn lr_w(rd: u32, rs1: u32) -> u32 {
    r(0x02 << 2, 0, rs1, 2, rd, 0x2f)
}
pub fn sc_w(rd: u32, rs2: u32, rs1: u32) -> u32 {
    r(0x03 << 2, rs2, rs1, 2, rd, 0x2f)
}
pub fn sw(rs2: u32, rs1: u32, imm: i32) -> u32 {
    s(imm, rs2, rs1, 2)
}
pub fn bne(rs1: u32, rs2: u32, off: i32) -> u32 {
    b(off, rs2, rs1, 1)
}

/// Little-endian bytes of a sequence of 32-bit instructions.
pub fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}
