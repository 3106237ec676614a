//! How guest memory reaches devices: every load and store in the device range (`abi::DEVICE_BASE..=DEVICE_END`)
//! goes to the `Mmio` that `Memory::devices` holds. Guest memory knows only this trait; the device bus that
//! implements it (the devices crate) sits above the ISA.

use std::any::Any;

use crate::trap::{Access, Trap};

/// The devices of a machine as guest memory sees them: loads and stores of 1, 2, 4 or 8 bytes at a physical
/// address inside the device range. A device access carries no time: its cost is charged by the timing hook
/// (the NIC's register latency), not here. `Any` lets the machine that built the bus find its concrete type again
/// (for stats and checkpoints).
pub trait Mmio: Any {
    /// A load of `size` bytes at `addr` (inside the device range), as `access` (a plain or an atomic load).
    fn load(&mut self, addr: u64, size: u8, access: Access) -> Result<u64, Trap>;
    /// A store of the low `size` bytes of `val` at `addr` (inside the device range).
    fn store(&mut self, addr: u64, size: u8, val: u64, access: Access) -> Result<(), Trap>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Memory;
    use kvsim_base::abi::{DEVICE_BASE, DEVICE_END};

    /// A device that records every access and answers loads with a value made from the address.
    #[derive(Default)]
    struct Recorder {
        loads: Vec<(u64, u8, Access)>,
        stores: Vec<(u64, u8, u64)>,
    }

    fn answer(addr: u64) -> u64 {
        addr ^ 0x5a5a
    }

    impl Mmio for Recorder {
        fn load(&mut self, addr: u64, size: u8, access: Access) -> Result<u64, Trap> {
            self.loads.push((addr, size, access));
            Ok(answer(addr))
        }

        fn store(&mut self, addr: u64, size: u8, val: u64, _access: Access) -> Result<(), Trap> {
            self.stores.push((addr, size, val));
            Ok(())
        }
    }

    fn memory_with_recorder() -> Memory {
        let mut mem = Memory::new(1 << 20, false, 1);
        mem.devices = Some(Box::new(Recorder::default()));
        mem
    }

    fn recorder(mem: &Memory) -> &Recorder {
        (mem.devices.as_deref().unwrap() as &dyn Any).downcast_ref().unwrap()
    }

    #[test]
    fn a_load_in_the_device_range_reaches_the_device_with_its_address_and_size_and_returns_its_value() {
        let mut mem = memory_with_recorder();
        let a = DEVICE_BASE + 0x1048;
        assert_eq!(mem.load::<8>(a).unwrap(), answer(a));
        assert_eq!(mem.load::<4>(a + 8).unwrap(), answer(a + 8));
        assert_eq!(mem.load_atomic::<8>(DEVICE_END - 7).unwrap(), answer(DEVICE_END - 7));
        assert_eq!(
            recorder(&mem).loads,
            vec![(a, 8, Access::Load), (a + 8, 4, Access::Load), (DEVICE_END - 7, 8, Access::Atomic)]
        );
        // Twice at the same address: device accesses never enter the TLB, so the second one reaches it too.
        mem.load::<8>(a).unwrap();
        assert_eq!(recorder(&mem).loads.len(), 4);
    }

    #[test]
    fn a_store_in_the_device_range_reaches_the_device_and_not_memory() {
        let mut mem = memory_with_recorder();
        mem.store::<2>(0, DEVICE_BASE + 0x10, 0xabcd_1234).unwrap();
        mem.store::<8>(0, DEVICE_BASE + 0x18, u64::MAX).unwrap();
        assert_eq!(
            recorder(&mem).stores,
            vec![(DEVICE_BASE + 0x10, 2, 0xabcd_1234), (DEVICE_BASE + 0x18, 8, u64::MAX)]
        );
        assert_eq!(mem.resident_pages(), 0, "no guest page was touched");
        // An ordinary address below the device range is plain memory: the device sees nothing.
        mem.store::<8>(0, DEVICE_BASE - 8, 7).unwrap_or(());
        assert_eq!(recorder(&mem).stores.len(), 2);
    }

    #[test]
    fn without_devices_a_device_access_is_a_fault_naming_the_address() {
        let mut mem = Memory::new(1 << 20, false, 1);
        let err = mem.load::<8>(DEVICE_BASE).unwrap_err();
        assert!(matches!(err, Trap::Mmio { addr: DEVICE_BASE, size: 8, access: Access::Load, .. }), "{err:?}");
        assert!(mem.store::<4>(0, DEVICE_BASE + 4, 1).is_err());
    }
}
