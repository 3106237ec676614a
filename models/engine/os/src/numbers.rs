//! Linux's numbers that the calls share (asm-generic riscv64): call numbers beyond base's table, mmap flags, the
//! guest's process id and the -errno return convention. Kept apart so the call families (linux, mem_calls,
//! thread) do not import each other for them.

pub const MAP_SHARED: u64 = 0x01;
pub const MAP_PRIVATE: u64 = 0x02;
pub const MAP_FIXED: u64 = 0x10;
pub const MAP_ANONYMOUS: u64 = 0x20;
pub const RLIMIT_STACK: u64 = 3;
/// More Linux riscv64 (asm-generic) call numbers: what static glibc uses at start-up and for ordinary programs.
pub mod calls {
    pub const IOCTL: u64 = 29;
    pub const FUTEX: u64 = 98;
    pub const NANOSLEEP: u64 = 101;
    pub const CLOCK_NANOSLEEP: u64 = 115;
    pub const SCHED_GETAFFINITY: u64 = 123;
    pub const SCHED_YIELD: u64 = 124;
    pub const RT_SIGACTION: u64 = 134;
    pub const RT_SIGPROCMASK: u64 = 135;
    pub const GETPID: u64 = 172;
    pub const GETPPID: u64 = 173;
    pub const GETUID: u64 = 174;
    pub const GETEUID: u64 = 175;
    pub const GETGID: u64 = 176;
    pub const GETEGID: u64 = 177;
    pub const GETTID: u64 = 178;
    pub const CLONE: u64 = 220;
    pub const SYSINFO: u64 = 179;
    pub const CLONE3: u64 = 435;
    pub const MADVISE: u64 = 233;
    pub const MREMAP: u64 = 216;
    pub const SOCKET: u64 = 198;
    pub const ENOTTY: i64 = 25;
    pub const EAFNOSUPPORT: i64 = 97;
}

pub use calls::{CLONE, FUTEX};

/// The guest's process id (its main thread's tid); thread ids are `PID + hart`.
pub const PID: u64 = 1000;

/// A Linux call's error result: -errno in a0.
pub fn neg(e: i64) -> u64 {
    (-e) as u64
}
