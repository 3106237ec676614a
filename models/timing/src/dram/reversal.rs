//! Why a read is served after a request that arrived later on its bank (`reversed_reads`), by cause, so the share
//! of reversed reads can be read as a model limit or as the traffic's own (issue #28, session 27). A diagnostic:
//! it is asked only for a read already found reversed, so it never changes where a request goes.

use super::bank_timeline::{BankTimeline, Gap};
use super::{Channel, Dram, DramAddr, Ticks};
use crate::Tick;

/// The cause of one reversed read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reversal {
    /// Its bank offered no earlier place: every interval before the later reservations was too short for its
    /// commands (PRE, tRP, ACT, tRAS or tRCD + column + tRTP), lay before its placement tick, or would have passed
    /// a request that arrived before it.
    Short,
    /// History no longer kept: the later arrivals it follows are all in bank entries dropped (beyond
    /// `BANK_EPISODES`), or an earlier place of its bank would have taken it but for commands the rank's ACT,
    /// tCCD_L or data bus timelines no longer keep (their floors, beyond `TIMELINE_LEN` commands).
    History,
    /// An earlier place of its bank was refused by the rank's ACT spacing (tRRD, tFAW), tCCD_L or the data bus
    /// with commands still kept: the channel was busy there.
    Other,
}

impl Dram {
    /// The cause for a read that arrived at `arrival`, going into `gap` of bank `bi` after a later arrival, when its
    /// bank had offered the places `refused` before it (each refused by the channel's timelines).
    pub(super) fn reversal(
        c: &Channel,
        tt: &Ticks,
        a: &DramAddr,
        bank: &BankTimeline,
        gap: &Gap,
        arrival: Tick,
        refused: &[Gap],
    ) -> Reversal {
        if bank.follows_only_dropped(gap, arrival) {
            return Reversal::History;
        }
        let after_cas = tt.rtp;
        let fits_without_floors = |g: &Gap| {
            let (_, act, cas) = Self::place::<false>(c, tt, a, false, g);
            act.map_or(0, |x| x + tt.ras).max(cas + after_cas) <= g.pre_limit
        };
        if refused.iter().any(fits_without_floors) {
            Reversal::History
        } else if refused.is_empty() {
            Reversal::Short
        } else {
            Reversal::Other
        }
    }
}
