//! The parameters of every kvsim model, as the Python side declares them (see `models/params.py`).
//! `generated.rs` is written by `python -m models.codegen`; the units are canonical: bytes, Hz, picoseconds.

mod generated;
pub use generated::*;

/// Read a resolved configuration (the JSON that `SimObject.to_dict()` produced).
pub fn system_from_json(text: &str) -> Result<System, serde_json::Error> {
    serde_json::from_str(text)
}
