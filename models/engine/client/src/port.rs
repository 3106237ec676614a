//! The client's only view of the machine: the NICs' ports and queues, in global numbers (NIC 0's first). The
//! engine implements it over its NICs, so the client knows nothing of NIC registers, switches or timing.

/// The NICs as the client sees them.
pub trait NicPort {
    /// Put a frame on global port `port`'s wire at `t` (detailed timing); returns when it starts.
    fn wire_send(&mut self, port: usize, frame: Vec<u8>, t: u64) -> u64;
    /// A frame arrives at global port `port` (functional): the queue it was steered to, or None if dropped.
    fn receive(&mut self, port: usize, frame: Vec<u8>) -> Option<usize>;
    /// Global queue `q` is enabled and its driver has posted RX buffers (its RX tail moved).
    fn rx_posted(&self, q: usize) -> bool;
    /// Global queue `q` has every RX buffer handed back to the NIC and nothing left to send.
    fn queue_drained(&self, q: usize) -> bool;
    /// Frames waiting in the NICs' RX FIFOs.
    fn fifo_frames(&self) -> usize;
    /// Frames on their way through the NICs (wires, FIFOs, DMA, zero-copy slots).
    fn frames_in_flight(&self) -> usize;
}
