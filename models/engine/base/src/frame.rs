//! Ethernet frame facts that the NICs and the client share.

/// Largest frame without FCS at MTU 1500, and the shortest the wire carries (shorter ones are padded).
pub const MAX_FRAME: usize = 1514;
pub const MIN_FRAME: usize = 60;
/// Bytes each frame adds on the wire: preamble + SFD (8), FCS (4), inter-frame gap (12).
pub const WIRE_OVERHEAD: u64 = 24;

/// The destination port of an IPv4/UDP or IPv4/TCP frame (both keep it at the same place), as a perfect-match
/// filter sees it.
pub fn udp_dst_port(frame: &[u8]) -> Option<u16> {
    if frame.len() < 14 + 20 || u16::from_be_bytes([frame[12], frame[13]]) != 0x0800 {
        return None;
    }
    let ihl = (frame[14] & 0x0f) as usize * 4;
    if frame[14] >> 4 != 4 || ihl < 20 || !matches!(frame[23], 6 | 17) {
        return None;
    }
    let at = 14 + ihl + 2;
    (frame.len() >= at + 2).then(|| u16::from_be_bytes([frame[at], frame[at + 1]]))
}
