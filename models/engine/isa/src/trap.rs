//! Guest exceptions raised while executing: small values on the hot path, turned into `SimError::Guest` (with a
//! human reason) only when a run stops.

use kvsim_base::error::FaultKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Load,
    Store,
    Fetch,
    Atomic,
}

impl Access {
    /// The preposition that goes with "unmapped address" ("load from", "store to", ...).
    fn towards(self) -> &'static str {
        match self {
            Access::Load | Access::Fetch => "from",
            Access::Store | Access::Atomic => "to",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Access::Load => "load",
            Access::Store => "store",
            Access::Fetch => "instruction fetch",
            Access::Atomic => "atomic access",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trap {
    Misaligned {
        addr: u64,
        size: u8,
        access: Access,
    },
    Unmapped {
        addr: u64,
        access: Access,
    },
    /// FS mode: Sv39 translation refused the access (no valid mapping, or its permissions forbid it); the guest
    /// takes a page fault.
    PageFault {
        addr: u64,
        access: Access,
    },
    /// A mapped page whose permissions (ELF segment flags, mmap/mprotect) forbid the access.
    Protection {
        addr: u64,
        access: Access,
    },
    /// An access in the device range that no device register accepts (`why` says what is wrong).
    Mmio {
        addr: u64,
        size: u8,
        access: Access,
        why: &'static str,
    },
    Limit {
        page: u64,
        limit: u64,
    },
    Illegal(&'static str),
    Csr(u16),
    Ebreak,
    Syscall(u64),
    /// A NUMA simulator call named a socket the system does not have (`call` is the call's name).
    NoSocket {
        call: &'static str,
        socket: u64,
        sockets: u16,
    },
}

impl Trap {
    pub fn kind(&self) -> FaultKind {
        match self {
            Trap::Misaligned { .. }
            | Trap::Unmapped { .. }
            | Trap::Protection { .. }
            | Trap::Mmio { .. }
            | Trap::PageFault { .. } => FaultKind::Memory,
            Trap::Limit { .. } => FaultKind::MemoryLimit,
            Trap::Illegal(_) | Trap::Csr(_) | Trap::Ebreak => FaultKind::IllegalInstruction,
            Trap::Syscall(_) => FaultKind::UnsupportedSyscall,
            Trap::NoSocket { .. } => FaultKind::BadSimcall,
        }
    }

    pub fn reason(&self) -> String {
        match self {
            Trap::Misaligned { addr, size, access } => {
                format!("{} of {size} bytes at {addr:#x} is misaligned", access.noun())
            }
            Trap::Unmapped { addr, access } => {
                format!("{} {} unmapped address {addr:#x}", access.noun(), access.towards())
            }
            Trap::Protection { addr, access } => {
                let right = match access {
                    Access::Load => "read",
                    Access::Store => "write",
                    Access::Fetch => "execute",
                    Access::Atomic => "read and write",
                };
                format!("{} {} address {addr:#x}: its page has no {right} permission", access.noun(), access.towards())
            }
            Trap::PageFault { addr, access } => {
                format!(
                    "{} {} address {addr:#x}: page fault (Sv39 translation refused it)",
                    access.noun(),
                    access.towards()
                )
            }
            Trap::Mmio { addr, size, access, why } => {
                format!("{} of {size} bytes at {addr:#x} (device range): {why}", access.noun())
            }
            Trap::Limit { page, limit } => {
                format!("touching page {page:#x} would exceed mem_limit of {limit} bytes")
            }
            Trap::Illegal(why) => format!("illegal instruction: {why}"),
            Trap::Csr(csr) => {
                format!("illegal instruction: CSR {csr:#05x} is not supported (only reads of cycle, time and instret)")
            }
            Trap::Ebreak => "ebreak: breakpoint reached, the run stops".to_string(),
            Trap::NoSocket { call, socket, sockets } => {
                format!("simulator call {call} asked for NUMA socket {socket}, which does not exist: the system has sockets 0..{}", sockets.saturating_sub(1))
            }
            Trap::Syscall(n) => {
                if (kvsim_base::abi::simcall::FIRST..=kvsim_base::abi::simcall::LAST).contains(n) {
                    format!("unsupported simulator call {n:#x}")
                } else {
                    match kvsim_base::abi::syscall_name(*n) {
                        Some(name) => format!("unsupported system call {n} ({name})"),
                        None => format!("unsupported system call {n}"),
                    }
                }
            }
        }
    }
}
