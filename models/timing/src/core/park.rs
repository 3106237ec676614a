//! The partitioned schedule's probe of an instruction before it is timed (issue 24 item 5, HOST_THREADS.md): which
//! accesses timing it would send to the memory system, so that one which may reach another socket's memory parts
//! (a remote miss walking the line's home) is parked until the window's end (`TimingSystem::on_inst_or_park`)
//! instead of walking the home inside its own partition's turn. The probe changes nothing: it reads the core's
//! fetch line and TLBs, and asks `leaves` about each address.

use super::Core;
use crate::inst::{InstClass, InstInfo, PrefetchKind};
use crate::tlb::Side;
use crate::AccessKind;

impl Core {
    /// May timing `inst` now (`Core::step`) send the memory system an access that leaves this core's socket?
    /// `leaves(addr, kind)` answers for one access (the memory system's `MemSystem::may_leave_socket`). The accesses
    /// asked about: the fetch of a new instruction line, the data access, and the page-table reads either's
    /// translation may need (every level below the PSC's, whatever the walk then finds). A superset of what the
    /// step sends, so nothing it sends is left out.
    /// A system instruction is asked about as any other: its fetch may leave (a new line homed elsewhere, or the
    /// walk of its page), and the system call an `ecall` makes is performed at the window's end after the parked
    /// instructions are timed (the engine's `perform_waiting_ecalls`), so it reads its hart's time once its
    /// instruction is timed. (Session 25 left system instructions out, which missed such a fetch.)
    pub fn may_leave_socket(&self, inst: &InstInfo, leaves: impl Fn(u64, AccessKind) -> bool) -> bool {
        if inst.pc >> self.line_shift != self.last_fetch_line
            && (self.walk_may_leave(Side::Inst, inst.pc, &leaves) || leaves(inst.pc, AccessKind::IFetch))
        {
            return true;
        }
        let kind = match inst.class {
            InstClass::Load => AccessKind::Read,
            InstClass::Store | InstClass::Atomic => AccessKind::Write,
            InstClass::Prefetch if inst.prefetch_kind == PrefetchKind::Instruction => AccessKind::IFetch,
            InstClass::Prefetch => AccessKind::Prefetch,
            _ => return false,
        };
        let side = if kind == AccessKind::IFetch { Side::Inst } else { Side::Data };
        self.walk_may_leave(side, inst.mem_addr, &leaves) || leaves(inst.mem_addr, kind)
    }

    /// May translating `va` for `side` read a page-table entry whose access leaves the socket?
    fn walk_may_leave(&self, side: Side, va: u64, leaves: &impl Fn(u64, AccessKind) -> bool) -> bool {
        let Some(m) = self.mmu.as_deref() else { return false };
        let mut any = false;
        m.walk_reads(side, va, |entry| any = any || leaves(entry, AccessKind::Read));
        any
    }
}
