//! Placeholder: the functional engine is being written (issue 2).
use crate::error::{SimError, SimResult};
use crate::output::RunOutput;
use kvsim_params::System;

pub fn run(_system: &System) -> SimResult<RunOutput> {
    Err(SimError::Bug("the functional engine is not built yet".into()))
}
