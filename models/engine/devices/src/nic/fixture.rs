//! What the NIC's timing tests (`nic/timing.rs`, `on_die_mac.rs`) set up as a driver would: a queue's rings, every RX
//! descriptor posted, and the frames they receive.

use crate::nic::{reg, NicRegs, TX_HEAD_WB_ENABLE};
use kvsim_base::abi::DEVICE_BASE;
use kvsim_isa::memory::Memory;
use kvsim_isa::trap::Access;

/// Bytes of the buffer each posted RX descriptor names.
pub const BUF_LEN: u64 = 256;

/// A UDP/IPv4 frame of `len` bytes to port 0x4000 (queue 0's steering entry in the tests).
pub fn udp_frame(len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    f[14] = 0x45;
    f[23] = 17;
    f[36..38].copy_from_slice(&0x4000u16.to_be_bytes());
    f
}

/// Queue 0's rings: `rx_size` RX descriptors at `rx_ring`, each posted with a `BUF_LEN` buffer from `bufs`; a TX
/// ring of `tx_size` at `tx_ring`; the TX head written back to `head_wb` when given (head-pointer mode).
pub struct Rings {
    pub rx_ring: u64,
    pub rx_size: u64,
    pub tx_ring: u64,
    pub tx_size: u64,
    pub bufs: u64,
    pub head_wb: Option<u64>,
}

impl Rings {
    /// Program the registers, enable the queue, post every RX descriptor and hand them to the NIC (RX_TAIL).
    pub fn enable(&self, regs: &mut NicRegs, mem: &mut Memory) {
        let a = |r| DEVICE_BASE + r;
        for (r, v) in [(reg::RX_BASE, self.rx_ring), (reg::RX_SIZE, self.rx_size), (reg::TX_BASE, self.tx_ring)] {
            regs.store(a(r), 8, v, Access::Store).unwrap();
        }
        regs.store(a(reg::TX_SIZE), 8, self.tx_size, Access::Store).unwrap();
        if let Some(hwb) = self.head_wb {
            regs.store(a(reg::TX_HEAD_WB), 8, hwb | TX_HEAD_WB_ENABLE, Access::Store).unwrap();
        }
        regs.store(a(reg::CTRL), 8, 1, Access::Store).unwrap();
        for i in 0..self.rx_size {
            let mut d = (self.bufs + i * BUF_LEN).to_le_bytes().to_vec();
            d.extend_from_slice(&(BUF_LEN as u16).to_le_bytes());
            d.extend_from_slice(&[0; 6]);
            mem.write_bytes(0, self.rx_ring + 16 * i, &d).unwrap();
        }
        regs.store(a(reg::RX_TAIL), 8, self.rx_size - 1, Access::Store).unwrap();
    }
}
