//! The device bus: guest loads and stores in the device range (`abi::DEVICE_BASE..=DEVICE_END`) go to the device
//! whose register window holds the address; an address no device claims (a hole between windows) is a clear
//! memory fault naming it. Guest memory never owns a device: `Memory` hands every device-range access to the bus.
//!
//! Today's devices are NICs. NIC k's window starts at `nic_base(k)`: the windows are `NIC_WINDOW` apart, room for
//! the most queues a NIC may have, and a NIC with fewer queues leaves the rest of its window unmapped.

use crate::dma::DmaPort;
use crate::nic::{NicRegs, MAX_QUEUES, QUEUE_STRIDE};
use kvsim_base::abi::{DEVICE_BASE, DEVICE_END};
use std::any::Any;

use kvsim_isa::memory::Memory;
use kvsim_isa::mmio::Mmio;
use kvsim_isa::trap::{Access, Trap};

/// Distance between the register windows of consecutive NICs: 1024 queues x 4 KiB.
pub const NIC_WINDOW: u64 = MAX_QUEUES * QUEUE_STRIDE;

/// Most NICs the device range holds.
pub const MAX_NICS: u64 = (DEVICE_END - DEVICE_BASE + 1) / NIC_WINDOW;

/// Base address of NIC k's registers.
pub fn nic_base(k: usize) -> u64 {
    DEVICE_BASE + k as u64 * NIC_WINDOW
}

/// A device's DMA port over the memory system's I/O calls; `queue_owner[q]` is the hart owning its queue q.
pub struct AgentPort<'a> {
    pub agent: usize,
    pub queue_owner: &'a [Option<usize>],
    pub memory: &'a mut dyn DmaPort,
}

impl DmaPort for AgentPort<'_> {
    fn agent(&self) -> usize {
        self.agent
    }

    fn queue_access(&mut self, queue: usize, addr: u64, write: bool, t: u64) -> u64 {
        let owner = self.queue_owner.get(queue).copied().flatten();
        self.memory.access_as(self.agent, owner, addr, write, t)
    }

    fn access_as(&mut self, agent: usize, owner: Option<usize>, addr: u64, write: bool, t: u64) -> u64 {
        self.memory.access_as(agent, owner, addr, write, t)
    }
}

/// The devices of a machine, by address.
#[derive(Debug, Clone, Default)]
pub struct DeviceBus {
    /// NIC k's registers, at `nic_base(k)`.
    pub nics: Vec<NicRegs>,
}

impl DeviceBus {
    /// The NIC whose register window holds `addr`.
    fn nic_at(&mut self, addr: u64, size: u8, access: Access) -> Result<&mut NicRegs, Trap> {
        let k = ((addr - DEVICE_BASE) / NIC_WINDOW) as usize;
        match self.nics.get_mut(k) {
            Some(regs) if addr - regs.base < regs.window() => Ok(regs),
            _ => Err(Trap::Mmio { addr, size, access, why: "no device at this address (a hole in the device range)" }),
        }
    }

    /// The device bus that `mem` holds (None: the machine has no devices).
    pub fn of(mem: &Memory) -> Option<&DeviceBus> {
        mem.devices.as_deref().and_then(|d| (d as &dyn Any).downcast_ref())
    }

    pub fn of_mut(mem: &mut Memory) -> Option<&mut DeviceBus> {
        mem.devices.as_deref_mut().and_then(|d| (d as &mut dyn Any).downcast_mut())
    }

    /// Take the device bus out of `mem` (so it and guest memory can be borrowed apart); `put_back` returns it.
    pub fn take(mem: &mut Memory) -> Option<Box<DeviceBus>> {
        mem.devices.take().map(|d| (d as Box<dyn Any>).downcast().expect("the machine's devices are a DeviceBus"))
    }

    pub fn put_back(self: Box<Self>, mem: &mut Memory) {
        mem.devices = Some(self);
    }
}

impl Mmio for DeviceBus {
    /// A load in the device range (`addr` is inside it).
    fn load(&mut self, addr: u64, size: u8, access: Access) -> Result<u64, Trap> {
        self.nic_at(addr, size, access)?.load(addr, size, access)
    }

    /// A store in the device range (`addr` is inside it).
    fn store(&mut self, addr: u64, size: u8, val: u64, access: Access) -> Result<(), Trap> {
        self.nic_at(addr, size, access)?.store(addr, size, val, access)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::reg;

    fn two_nics() -> DeviceBus {
        // NIC 0: 2 queues on 1 port; NIC 1: 3 queues on 2 ports.
        DeviceBus { nics: vec![NicRegs::at(nic_base(0), &[0, 0]), NicRegs::at(nic_base(1), &[0, 0, 1])] }
    }

    #[test]
    fn accesses_go_to_the_device_whose_window_holds_them() {
        let mut bus = two_nics();
        let q = |k: usize, q: u64, r: u64| nic_base(k) + q * QUEUE_STRIDE + r;
        assert_eq!(bus.load(q(0, 1, reg::QUEUE_ID), 8, Access::Load).unwrap(), 1);
        assert_eq!(bus.load(q(1, 2, reg::QUEUE_ID), 8, Access::Load).unwrap(), 2);
        assert_eq!(bus.load(q(1, 2, reg::PORT_ID), 8, Access::Load).unwrap(), 1);
        // A store reaches only its own NIC's queue.
        bus.store(q(1, 0, reg::RX_BASE), 8, 0x1000, Access::Store).unwrap();
        assert_eq!(bus.nics[1].queues[0].rx_base, 0x1000);
        assert_eq!(bus.nics[0].queues[0].rx_base, 0);
    }

    #[test]
    fn a_hole_between_devices_faults_naming_the_address() {
        let mut bus = two_nics();
        // Past NIC 0's two queues, before NIC 1's window; and past the last NIC.
        for addr in [nic_base(0) + 2 * QUEUE_STRIDE, nic_base(1) - 8, nic_base(1) + 3 * QUEUE_STRIDE, nic_base(2)] {
            let err = bus.load(addr, 8, Access::Load).unwrap_err();
            assert!(matches!(err, Trap::Mmio { addr: a, .. } if a == addr), "{err:?}");
            assert!(err.reason().contains("no device at this address"), "{}", err.reason());
            assert!(err.reason().contains(&format!("{addr:#x}")), "{}", err.reason());
            assert!(bus.store(addr, 8, 1, Access::Store).is_err());
        }
        const { assert!(MAX_NICS >= 64) };
    }
}
