//! Timing models. Each model takes requests stamped with a time (in ticks of 1 ps) and answers with the time at
//! which they complete, so models can be swapped without touching their neighbours.

pub mod inst;

/// Simulated time in picoseconds.
pub type Tick = u64;
