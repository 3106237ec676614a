//! The parameters of every kvsim model, as the Python side declares them (see `models/params.py`).
//! `generated/` (one file per Python model module) is written by `python -m models.codegen`; the units are
//! canonical: bytes, Hz, picoseconds.

#[rustfmt::skip] // written by the code generator, checked against its output (not by hand)
mod generated;
pub use generated::*;

/// Read a resolved configuration (the JSON that `SimObject.to_dict()` produced).
pub fn system_from_json(text: &str) -> Result<System, serde_json::Error> {
    serde_json::from_str(text)
}

impl System {
    /// The sockets: `sockets`, or, when it is empty, the one socket the flat fields describe (`harts`, `core`,
    /// `cores`, `caches`, `memory`, `cores_per_cluster`, `noc`). The same rule as `System.socket_list()` in Python.
    pub fn socket_list(&self) -> Vec<Socket> {
        if !self.sockets.is_empty() {
            return self.sockets.clone();
        }
        vec![Socket {
            cores: self.harts,
            cores_per_cluster: self.cores_per_cluster,
            core: self.core.clone(),
            core_models: self.cores.clone(),
            caches: self.caches.clone(),
            memory: self.memory.clone(),
            noc: self.noc.clone(),
        }]
    }
}

impl Socket {
    /// The core model of each core of the socket.
    pub fn core_of_each(&self) -> Vec<Core> {
        if self.core_models.is_empty() {
            vec![self.core.clone(); self.cores as usize]
        } else {
            self.core_models.clone()
        }
    }
}

// `paths` (statistics paths, `kvsim_params::paths::socket(0) + &paths::core(3)`) is generated too, from `models/stats_paths.py`.

#[cfg(test)]
mod tests {
    #[test]
    fn paths_follow_the_tree() {
        use super::paths;
        // A group with a parent gives its part below the parent's prefix.
        assert_eq!(paths::socket(1) + &paths::core(17), "system.socket1.core17.");
        assert_eq!(paths::socket(0) + &paths::noc() + &paths::link(3, 4), "system.socket0.noc.link3_4.");
        assert_eq!(paths::socket(0) + &paths::noc() + &paths::router(5), "system.socket0.noc.router5.");
        assert_eq!(paths::socket(0) + &paths::core(2) + &paths::private_cache("l1d"), "system.socket0.core2.l1d.");
        assert_eq!(paths::nic(1) + &paths::pcie(), "system.nic1.pcie.");
        assert_eq!(paths::system() + &paths::socket_link(0, 1), "system.link0_1.");
        assert!(paths::CHANNEL_COUNTERS.contains(&"activates"));
    }
}
