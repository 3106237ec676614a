//! Remote misses wait for the window's end (the partitioned schedule on several sockets, issue 24 item 5,
//! HOST_THREADS.md). Before a hart's instruction is timed, the probe (`Core::may_leave_socket`, asking
//! `MemSystem::may_leave_socket` about each access) says whether timing it may step outside the hart's socket:
//! mostly a remote miss, the first read of a line homed on another socket (the shared code's fetches, the upper
//! page tables' walks). Such an instruction is not timed in its partition's turn: it is parked, the hart's turn
//! ends after it (the engine reads `is_parked`), and the hart takes no other turn in the window. At the window's end
//! (`resume_parked`) every parked instruction is timed, in hart order, with the memory system as every partition
//! left it: the home answers with its state then, whichever partition ran first. The request leaves at the time
//! the core sends it, so it reaches another socket no sooner than the link's latency later, the window's length:
//! the home could not have seen it before the window's end anyway.
//!
//! The timing of the parked instruction is that of a core that waits for its reply: nothing of the core moves
//! until then (its next instruction is timed after it, in the next window), and the instruction is timed from the
//! times it was ready at, as if it had not waited. Only the order of the memory system's bookings changes.

use crate::inst::InstInfo;
use crate::system::{Parked, TimingSystem};

impl TimingSystem {
    /// The partitioned schedule on several sockets: from now on an instruction whose timing may step outside its
    /// socket waits for the window's end (`on_inst_or_park`). Nothing on one socket.
    pub fn park_remote_misses(&mut self) {
        if self.sockets() > 1 {
            let n = self.cores.len();
            self.parked =
                Some(Box::new(Parked { insts: vec![None; n], count: 0, per_hart: vec![0; n], crossed: vec![0; n] }));
        }
    }

    /// Whether instructions are probed and parked (`park_remote_misses`).
    #[inline(always)]
    pub fn parks(&self) -> bool {
        self.parked.is_some()
    }

    /// Time `info` on `hart` now, or park it until the window's end when its timing may step outside the hart's
    /// socket (true: parked; the hart's turn must end after it).
    /// Where nothing parks (`park_remote_misses` not called, or one socket) it is timed at once, unprobed, as
    /// `on_inst` times it: there is no turn to leave, and its crossings are the global walk's own, no probe's miss.
    pub fn on_inst_or_park(&mut self, hart: usize, info: &InstInfo) -> bool {
        if self.parked.is_none() {
            // Session 26 fell through to the in-turn path here whatever the probe said, so the check below took a
            // remote miss the probe had caught (but had nowhere to park) for one it missed (issue 24, speed-s27).
            self.on_inst(hart, info);
            return false;
        }
        let mem = &self.mem;
        if self.cores[hart].may_leave_socket(info, |addr, kind| mem.may_leave_socket(hart, addr, kind)) {
            let p = self.parked.as_deref_mut().expect("parks: checked above");
            // A second would overwrite the first, which would then never be timed: the schedule gives a parked
            // hart no turn until the window's end, and a lost instruction must not pass unsaid (one test per
            // parked instruction, a rare event).
            assert!(p.insts[hart].is_none(), "hart {hart} has an instruction parked already");
            p.insts[hart] = Some(*info);
            p.count += 1;
            p.per_hart[hart] += 1;
            return true;
        }
        let crossed = self.on_inst_in_turn(hart, info);
        // The probe is meant to be a superset of what leaves (`MemSystem::may_leave_socket`): a miss would make the
        // statistics depend on the partitions' order again. Release builds count it (`unparked_crossings`, per core
        // and since the start).
        debug_assert!(!crossed, "hart {hart}'s instruction at {:#x}, said to stay on its socket, left it", info.pc);
        false
    }

    /// Time `info` on `hart` in its partition's turn (the probe said it stays on its socket): true, and counted in
    /// the core's `unparked_crossings`, when its walk sent a message to another socket after all (the probe missed
    /// it). Any such message crosses inside a turn, where which partitions have run decides what it finds.
    pub fn on_inst_in_turn(&mut self, hart: usize, info: &InstInfo) -> bool {
        let across = |sys: &TimingSystem| sys.mem.socket_messages().map_or(0, |o| o.sent_across());
        let before = across(self);
        self.on_inst(hart, info);
        let crossed = across(self) != before;
        if crossed {
            self.unparked_crossings += 1;
            if let Some(p) = self.parked.as_deref_mut() {
                p.crossed[hart] += 1;
            }
        }
        crossed
    }

    /// Has `hart` an instruction waiting for the window's end?
    #[inline]
    pub fn is_parked(&self, hart: usize) -> bool {
        self.parked.as_deref().is_some_and(|p| p.insts[hart].is_some())
    }

    /// The window's end: every parked instruction is timed, in hart order.
    pub fn resume_parked(&mut self) {
        let Some(p) = self.parked.as_deref_mut() else { return };
        if p.insts.iter().all(Option::is_none) {
            return;
        }
        let parked: Vec<(usize, InstInfo)> =
            p.insts.iter_mut().enumerate().filter_map(|(h, i)| i.take().map(|i| (h, i))).collect();
        for (hart, info) in parked {
            self.on_inst(hart, &info);
        }
    }

    /// Instructions parked so far (0 when nothing is parked).
    pub fn parked_count(&self) -> u64 {
        self.parked.as_deref().map_or(0, |p| p.count)
    }

    /// Instructions timed in their partition's turn that sent another socket a message, since the start (never
    /// reset; per core since the last reset: `unparked_crossings` statistics). Nonzero: the probe missed a crossing
    /// (or a caller bypassed it, `on_inst_in_turn`). Release builds' view of `on_inst_or_park`'s debug assertion.
    pub fn unparked_crossings(&self) -> u64 {
        self.unparked_crossings
    }
}
