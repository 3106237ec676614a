//! Static ELF64 loader (RISC-V, little endian). Accepts ET_EXEC, and static-pie ET_DYN without PT_INTERP
//! (loaded at `PIE_BASE`). Every header is bounds-checked against the file; anything else is an ElfError.

use kvsim_base::abi::{DEVICE_BASE, MMAP_TOP, PAGE_SIZE};

const EM_RISCV: u16 = 243;
const ET_EXEC: u16 = 2;
const ET_DYN: u16 = 3;
const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;
const PT_PHDR: u32 = 6;
const PT_TLS: u32 = 7;
/// Where a static-pie binary is placed.
pub const PIE_BASE: u64 = 0x40_0000;
/// Highest address a segment may reach (below the mmap area's usual range and the devices).
const SEGMENT_LIMIT: u64 = MMAP_TOP / 2;
const _: () = assert!(SEGMENT_LIMIT < DEVICE_BASE);

#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub vaddr: u64,
    pub memsz: u64,
    /// File bytes copied to `vaddr` (the rest up to `memsz` is zero).
    pub data: Vec<u8>,
    /// p_flags: PF_X 1, PF_W 2, PF_R 4 (the pages' permissions).
    pub flags: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    pub entry: u64,
    pub segments: Vec<Segment>,
    /// Address of the program headers in guest memory (AT_PHDR), 0 if they are not loaded.
    pub phdr: u64,
    pub phnum: u64,
    /// First byte after the highest segment.
    pub end: u64,
    /// Has thread-local storage (PT_TLS): a Linux process such as static glibc (see the os crate's threads).
    pub tls: bool,
}

fn u16_at(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}
fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().unwrap_or([0; 4]))
}
fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().unwrap_or([0; 8]))
}

/// Parse a static riscv64 ELF from its bytes.
pub fn parse(file: &[u8]) -> Result<Image, String> {
    if file.len() < 64 {
        return Err(format!("file is {} bytes, too short for an ELF64 header", file.len()));
    }
    if &file[0..4] != b"\x7fELF" {
        return Err("not an ELF file (bad magic)".into());
    }
    if file[4] != 2 {
        return Err("not a 64-bit ELF (EI_CLASS is not ELFCLASS64)".into());
    }
    if file[5] != 1 {
        return Err("not a little-endian ELF".into());
    }
    let e_type = u16_at(file, 16);
    let machine = u16_at(file, 18);
    if machine != EM_RISCV {
        return Err(format!("e_machine is {machine}, not RISC-V (243)"));
    }
    if e_type != ET_EXEC && e_type != ET_DYN {
        return Err(format!("e_type is {e_type}: only executables (ET_EXEC) and static-pie (ET_DYN) run"));
    }
    let mut entry = u64_at(file, 24);
    let phoff = u64_at(file, 32);
    let phentsize = u16_at(file, 54) as u64;
    let phnum = u16_at(file, 56) as u64;
    if phnum == 0 {
        return Err("no program headers".into());
    }
    if phentsize != 56 {
        return Err(format!("e_phentsize is {phentsize}, expected 56"));
    }
    let ph_end = phoff.checked_add(phnum * phentsize).filter(|&e| e <= file.len() as u64);
    if ph_end.is_none() {
        return Err(format!("program headers ({phnum} at offset {phoff:#x}) run past the end of the file"));
    }
    struct Ph {
        ptype: u32,
        flags: u32,
        offset: u64,
        vaddr: u64,
        filesz: u64,
        memsz: u64,
    }
    let mut phs = Vec::new();
    for i in 0..phnum {
        let o = (phoff + i * phentsize) as usize;
        phs.push(Ph {
            ptype: u32_at(file, o),
            flags: u32_at(file, o + 4),
            offset: u64_at(file, o + 8),
            vaddr: u64_at(file, o + 16),
            filesz: u64_at(file, o + 32),
            memsz: u64_at(file, o + 40),
        });
    }
    if phs.iter().any(|p| p.ptype == PT_INTERP) {
        return Err("dynamically linked (has PT_INTERP): link the workload with -static".into());
    }
    if e_type == ET_EXEC && phs.iter().any(|p| p.ptype == PT_DYNAMIC) {
        return Err("has a dynamic section (PT_DYNAMIC): link the workload with -static".into());
    }
    let bias = if e_type == ET_DYN {
        let lowest = phs.iter().filter(|p| p.ptype == PT_LOAD).map(|p| p.vaddr).min().unwrap_or(0);
        PIE_BASE.wrapping_sub(lowest & !(PAGE_SIZE - 1))
    } else {
        0
    };
    entry = entry.wrapping_add(bias);
    let mut segments = Vec::new();
    let mut phdr = 0;
    let mut end = 0;
    for p in &phs {
        if p.ptype == PT_PHDR {
            phdr = p.vaddr.wrapping_add(bias);
        }
        if p.ptype != PT_LOAD || p.memsz == 0 {
            continue;
        }
        if p.filesz > p.memsz {
            return Err(format!("segment at {:#x}: p_filesz {:#x} > p_memsz {:#x}", p.vaddr, p.filesz, p.memsz));
        }
        let file_end = p.offset.checked_add(p.filesz).filter(|&e| e <= file.len() as u64);
        let Some(file_end) = file_end else {
            return Err(format!(
                "segment at {:#x}: file bytes {:#x}+{:#x} run past the end of the file ({} bytes)",
                p.vaddr,
                p.offset,
                p.filesz,
                file.len()
            ));
        };
        let vaddr = p.vaddr.wrapping_add(bias);
        let seg_end = vaddr.checked_add(p.memsz).filter(|&e| e <= SEGMENT_LIMIT && vaddr >= PAGE_SIZE);
        let Some(seg_end) = seg_end else {
            return Err(format!(
                "segment at {vaddr:#x} (+{:#x}) is outside the loadable range {PAGE_SIZE:#x}..{SEGMENT_LIMIT:#x}",
                p.memsz
            ));
        };
        if phdr == 0 && p.offset <= phoff && phoff + phnum * phentsize <= file_end {
            phdr = vaddr + (phoff - p.offset);
        }
        end = end.max(seg_end);
        let data = file[p.offset as usize..file_end as usize].to_vec();
        segments.push(Segment { vaddr, memsz: p.memsz, data, flags: p.flags });
    }
    if segments.is_empty() {
        return Err("no loadable segments".into());
    }
    if entry & 1 != 0 {
        return Err(format!("entry point {entry:#x} is not 2-byte aligned"));
    }
    let in_segment = segments.iter().any(|s| entry >= s.vaddr && entry < s.vaddr + s.memsz);
    if !in_segment {
        return Err(format!("entry point {entry:#x} is not inside any loadable segment"));
    }
    let tls = phs.iter().any(|p| p.ptype == PT_TLS);
    Ok(Image { entry, segments, phdr, phnum, end, tls })
}

/// Read and parse the workload binary.
pub fn load(path: &str) -> Result<Image, String> {
    if path.is_empty() {
        return Err("System.workload.binary is empty".into());
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    parse(&bytes).map_err(|e| format!("{path}: {e}"))
}

/// Build a minimal static riscv64 executable: one RWX segment at `base` holding `code`, entry at `base`.
/// (For tests of the loader and of whole runs.)
pub fn tiny_elf(base: u64, code: &[u8]) -> Vec<u8> {
    let mut f = vec![0u8; 64 + 56];
    f[0..4].copy_from_slice(b"\x7fELF");
    f[4] = 2;
    f[5] = 1;
    f[6] = 1;
    f[16..18].copy_from_slice(&ET_EXEC.to_le_bytes());
    f[18..20].copy_from_slice(&EM_RISCV.to_le_bytes());
    f[20..24].copy_from_slice(&1u32.to_le_bytes());
    f[24..32].copy_from_slice(&(base + 0x78).to_le_bytes()); // entry: right after the headers
    f[32..40].copy_from_slice(&64u64.to_le_bytes());
    f[52..54].copy_from_slice(&64u16.to_le_bytes());
    f[54..56].copy_from_slice(&56u16.to_le_bytes());
    f[56..58].copy_from_slice(&1u16.to_le_bytes());
    let total = (0x78 + code.len()) as u64;
    let ph = 64;
    f[ph..ph + 4].copy_from_slice(&PT_LOAD.to_le_bytes());
    f[ph + 4..ph + 8].copy_from_slice(&7u32.to_le_bytes());
    f[ph + 8..ph + 16].copy_from_slice(&0u64.to_le_bytes());
    f[ph + 16..ph + 24].copy_from_slice(&base.to_le_bytes());
    f[ph + 24..ph + 32].copy_from_slice(&base.to_le_bytes());
    f[ph + 32..ph + 40].copy_from_slice(&total.to_le_bytes());
    f[ph + 40..ph + 48].copy_from_slice(&(total + 0x1000).to_le_bytes());
    f[ph + 48..ph + 56].copy_from_slice(&0x1000u64.to_le_bytes());
    f.extend_from_slice(code);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tiny_executable() {
        let img = parse(&tiny_elf(0x10000, &[0x13, 0, 0, 0])).unwrap();
        assert_eq!(img.entry, 0x10078);
        assert_eq!(img.segments.len(), 1);
        assert_eq!(img.segments[0].vaddr, 0x10000);
        assert_eq!(img.segments[0].data.len(), 0x7c);
        assert_eq!(img.phdr, 0x10040);
        assert_eq!(img.phnum, 1);
        assert_eq!(img.end, 0x10000 + 0x7c + 0x1000);
    }

    #[test]
    fn rejects_garbage_and_truncation() {
        assert!(parse(b"hello").unwrap_err().contains("too short"));
        assert!(parse(&[0x55u8; 200]).unwrap_err().contains("magic"));
        let good = tiny_elf(0x10000, &[0x13, 0, 0, 0]);
        // Cut inside the program headers.
        assert!(parse(&good[..100]).unwrap_err().contains("past the end"));
        // Cut inside the segment's file bytes.
        let e = parse(&good[..good.len() - 2]).unwrap_err();
        assert!(e.contains("past the end of the file"), "{e}");
    }

    #[test]
    fn rejects_wrong_machine_class_and_type() {
        let mut f = tiny_elf(0x10000, &[0x13, 0, 0, 0]);
        f[18] = 62; // x86-64
        assert!(parse(&f).unwrap_err().contains("not RISC-V"));
        let mut f = tiny_elf(0x10000, &[0x13, 0, 0, 0]);
        f[4] = 1;
        assert!(parse(&f).unwrap_err().contains("64-bit"));
        let mut f = tiny_elf(0x10000, &[0x13, 0, 0, 0]);
        f[16] = 1; // ET_REL
        assert!(parse(&f).unwrap_err().contains("e_type"));
        let mut f = tiny_elf(0x10000, &[0x13, 0, 0, 0]);
        f[64] = PT_INTERP as u8;
        assert!(parse(&f).unwrap_err().contains("PT_INTERP"));
    }

    #[test]
    fn rejects_segments_outside_the_user_range() {
        let f = tiny_elf(0x30_0000_0000, &[0x13, 0, 0, 0]);
        assert!(parse(&f).unwrap_err().contains("outside the loadable range"));
        let f = tiny_elf(0, &[0x13, 0, 0, 0]);
        assert!(parse(&f).unwrap_err().contains("outside the loadable range"));
    }

    #[test]
    fn static_pie_is_loaded_at_pie_base() {
        let mut f = tiny_elf(0, &[0x13, 0, 0, 0]);
        f[16] = ET_DYN as u8;
        let img = parse(&f).unwrap();
        assert_eq!(img.entry, PIE_BASE + 0x78);
        assert_eq!(img.segments[0].vaddr, PIE_BASE);
        assert_eq!(img.phdr, PIE_BASE + 0x40);
    }

    #[test]
    fn missing_file_is_reported() {
        assert!(load("/nonexistent/kvsim/prog").unwrap_err().contains("cannot read"));
    }
}
