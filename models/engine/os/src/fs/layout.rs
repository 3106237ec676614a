//! The byte layouts of the file calls' structures on riscv64 (asm-generic): struct stat, struct statx and
//! struct linux_dirent64.

/// What the stat calls report about a node. Owner and group are root's (the guest runs as uid 0); access and change
/// times equal the modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub dev: u64,
    pub ino: u64,
    pub mode: u32,
    pub nlink: u32,
    pub size: u64,
    pub mtime_ns: u64,
}

const BLOCK: u64 = 4096;

impl Stat {
    fn blocks(&self) -> u64 {
        self.size.div_ceil(BLOCK) * (BLOCK / 512)
    }

    /// struct stat (128 bytes): st_dev 0, st_ino 8, st_mode 16, st_nlink 20, st_uid 24, st_gid 28, st_rdev 32,
    /// st_size 48, st_blksize 56, st_blocks 64, then atime, mtime and ctime (seconds, nanoseconds) from 72.
    pub fn to_stat(&self) -> [u8; 128] {
        let mut b = [0u8; 128];
        b[0..8].copy_from_slice(&self.dev.to_le_bytes());
        b[8..16].copy_from_slice(&self.ino.to_le_bytes());
        b[16..20].copy_from_slice(&self.mode.to_le_bytes());
        b[20..24].copy_from_slice(&self.nlink.to_le_bytes());
        b[48..56].copy_from_slice(&self.size.to_le_bytes());
        b[56..60].copy_from_slice(&(BLOCK as u32).to_le_bytes());
        b[64..72].copy_from_slice(&self.blocks().to_le_bytes());
        let (sec, nsec) = (self.mtime_ns / 1_000_000_000, self.mtime_ns % 1_000_000_000);
        for at in [72, 88, 104] {
            b[at..at + 8].copy_from_slice(&sec.to_le_bytes());
            b[at + 8..at + 16].copy_from_slice(&nsec.to_le_bytes());
        }
        b
    }

    /// struct statx (256 bytes) with every basic field (STATX_BASIC_STATS): stx_mask 0, stx_blksize 4,
    /// stx_nlink 16, stx_uid 20, stx_gid 24, stx_mode 28 (u16), stx_ino 32, stx_size 40, stx_blocks 48, then the
    /// timestamps (i64 seconds, u32 nanoseconds, 16 bytes each) atime 64, btime 80, ctime 96, mtime 112,
    /// stx_dev_major 136, stx_dev_minor 140.
    pub fn to_statx(&self) -> [u8; 256] {
        const STATX_BASIC_STATS: u32 = 0x7ff;
        let mut b = [0u8; 256];
        b[0..4].copy_from_slice(&STATX_BASIC_STATS.to_le_bytes());
        b[4..8].copy_from_slice(&(BLOCK as u32).to_le_bytes());
        b[16..20].copy_from_slice(&self.nlink.to_le_bytes());
        b[28..30].copy_from_slice(&(self.mode as u16).to_le_bytes());
        b[32..40].copy_from_slice(&self.ino.to_le_bytes());
        b[40..48].copy_from_slice(&self.size.to_le_bytes());
        b[48..56].copy_from_slice(&self.blocks().to_le_bytes());
        let (sec, nsec) = (self.mtime_ns / 1_000_000_000, (self.mtime_ns % 1_000_000_000) as u32);
        for at in [64, 96, 112] {
            b[at..at + 8].copy_from_slice(&sec.to_le_bytes());
            b[at + 8..at + 12].copy_from_slice(&nsec.to_le_bytes());
        }
        b[140..144].copy_from_slice(&(self.dev as u32).to_le_bytes());
        b
    }
}

/// One struct linux_dirent64: d_ino u64, d_off i64, d_reclen u16, d_type u8, the name and a NUL, padded to 8.
pub fn dirent64(ino: u64, next: u64, kind: u8, name: &str) -> Vec<u8> {
    let len = (19 + name.len() + 1).next_multiple_of(8);
    let mut b = vec![0u8; len];
    b[0..8].copy_from_slice(&ino.to_le_bytes());
    b[8..16].copy_from_slice(&next.to_le_bytes());
    b[16..18].copy_from_slice(&(len as u16).to_le_bytes());
    b[18] = kind;
    b[19..19 + name.len()].copy_from_slice(name.as_bytes());
    b
}
