//! kvsim's engine, exposed to Python as `models._engine`.
//!
//! The Python boundary is this file only: it reads the resolved configuration (JSON from `SimObject.to_dict()`),
//! runs the simulation with the GIL released, and turns every failure, including a Rust panic, into the matching
//! exception class of `models.errors`.
//!
//! The engine is six crates under models/engine/, each depending only on those below it (`cargo tree`):
//!
//! ```text
//! engine   (this crate: Python boundary, run driver `driver`, scheduler `sim`, simulator calls `simcall`,
//!   |       the NICs-and-client step `net`, checkpoints of the whole machine `checkpoint`, FS runs `full_system`)
//!   +-- client   (ghost client: requests, UDP/memcached/TCP codecs, checking, store model; `NicPort` trait)
//!   +-- devices  (device bus implementing isa's `Mmio`, `dma::DmaPort`, NICs, KVD switch, PCIe, on-die MAC, MAC SRAM)
//!   +-- os       (SE mode: Linux calls, threads, the `Process` state; FS mode's machine, firmware and devices)
//!   +-- isa      (harts, decode, execute, FPU, guest memory with devices behind `Mmio`, ELF, traps)
//!         +-- base   (ABI constants, errors, run output, random numbers, frame facts)
//! timing (models/timing) and params (models/params) sit below them all.
//! ```
//!
//! The machine (`sim::Machine`) owns the harts, guest memory, the os crate's `Process` and the network; it
//! implements the client's `NicPort` over its NICs (`net::Nics`) and lends the os crate a `Linux` view of itself
//! for each call (`Machine::os`).

pub mod checkpoint;
pub mod config;
pub mod driver;
pub mod fs_checkpoint;
pub mod fs_net;
pub mod fs_profile;
pub mod full_system;
#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod mac_sram_tests;
pub mod net;
mod page_check;
pub mod sampling;
pub mod sim;
pub mod simcall;
#[cfg(test)]
mod warm_tests;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use kvsim_base::error::SimError;
use kvsim_base::output::RunOutput;

/// Build the `models.errors` exception that matches a SimError.
fn to_pyerr(py: Python<'_>, err: &SimError) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let class = py.import("models.errors")?.getattr(err.python_class())?;
        let instance = match err {
            SimError::Guest { hart, pc, insn, reason, .. } => {
                class.call1((err.to_string(), *hart, *pc, *insn, reason.clone()))?
            }
            _ => class.call1((err.to_string(),))?,
        };
        Ok(PyErr::from_value(instance))
    };
    build().unwrap_or_else(|import_failure| import_failure)
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

/// Run `f` with the GIL released and no panic escaping. A failure keeps what the run had so far (the guest's
/// output and statistics): the exception gets it as its `partial` attribute (a dict like `run`'s result, or None).
fn guarded<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> Result<T, (SimError, Option<RunOutput>)> + Send,
) -> PyResult<T> {
    let outcome = py.detach(|| catch_unwind(AssertUnwindSafe(f)));
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err((err, partial))) => {
            let e = to_pyerr(py, &err);
            let partial = match &partial {
                Some(out) => output_to_dict(py, out).map(|d| d.into_any().unbind()).ok(),
                None => None,
            };
            let _ = e.value(py).setattr("partial", partial);
            Err(e)
        }
        Err(payload) => Err(to_pyerr(py, &SimError::Bug(panic_message(payload)))),
    }
}

/// Instructions between two checks for a pending signal (Ctrl-C) when no progress callback sets the pace: a few
/// milliseconds of simulation, so an interrupt is honoured at once while the checks cost nothing measurable.
const SIGNAL_CHECK_EVERY: u64 = 2_000_000;

fn output_to_dict<'py>(py: Python<'py>, out: &RunOutput) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("stop_reason", out.stop.as_str())?;
    dict.set_item("exit_code", out.exit_code)?;
    dict.set_item("stdout", PyBytes::new(py, &out.stdout))?;
    dict.set_item("stderr", PyBytes::new(py, &out.stderr))?;
    dict.set_item("sim_ticks", out.sim_ticks)?;
    let harts = PyList::empty(py);
    for hart in &out.harts {
        let h = PyDict::new(py);
        h.set_item("insts", hart.insts)?;
        h.set_item("exit_code", hart.exit_code)?;
        harts.append(h)?;
    }
    dict.set_item("harts", harts)?;
    let stats = PyList::empty(py);
    for stat in &out.stats {
        stats.append((stat.name.as_str(), stat.value, stat.desc.as_str()))?;
    }
    dict.set_item("stats", stats)?;
    let dumps = PyList::empty(py);
    for (ticks, snapshot) in &out.stat_dumps {
        let values = PyList::empty(py);
        for stat in snapshot {
            values.append((stat.name.as_str(), stat.value))?;
        }
        dumps.append((*ticks, values))?;
    }
    dict.set_item("stat_dumps", dumps)?;
    dict.set_item("numa_ranges", out.numa_ranges.clone())?;
    let files = PyList::empty(py);
    for (path, data) in &out.scratch_files {
        files.append((path.as_str(), PyBytes::new(py, data)))?;
    }
    dict.set_item("scratch_files", files)?;
    Ok(dict)
}

/// Run one simulation from a resolved configuration (JSON). Returns a dict: stop_reason, exit_code, stdout,
/// stderr, sim_ticks, harts (insts, exit_code each), stats (a list of (name, value, description)), stat_dumps
/// (the guest's STATS_DUMP snapshots: a list of (sim_ticks, [(name, value), ...])) and numa_ranges (the NUMA
/// map's placed ranges: a list of (start, end, socket)).
///
/// `progress`, if given, is called as `progress(insts, sim_ticks, phase, answered)` (answered: the measured
/// requests answered so far, None without a client) about every `progress_every`
/// instructions (between scheduling turns, with the GIL taken back briefly; the run itself holds no GIL). If it
/// raises, the run stops and the exception propagates. Pending signals are checked at every report (or every
/// `SIGNAL_CHECK_EVERY` instructions without a callback): Ctrl-C stops the run between turns with stop_reason
/// "interrupted" and the results so far, from any front end (a terminal, a pipe, the Python API).
///
/// Reports are counted from the start of each phase (`driver::Progress::phase_insts`): the measured phase's reports
/// fall at the same instructions whatever ran before it.
///
/// `at_measure`, if given (SE mode), is called with no arguments once where detailed timing is about to start
/// (`driver::run_system_with_measure`: no engine thread runs then, so it may fork); it returns None, or
/// (offered M frames/s a port, measured requests) for the measured phase, or (the same, progress_every): the
/// measured phase then reports every progress_every instructions (a process forked there samples its own window).
#[pyfunction]
#[pyo3(signature = (config_json, progress=None, progress_every=10_000_000, at_measure=None))]
// The run's closure returns `run_system_keeping_output`'s large error, once per run (see there).
#[allow(clippy::result_large_err)]
fn run<'py>(
    py: Python<'py>,
    config_json: &str,
    progress: Option<Py<PyAny>>,
    progress_every: u64,
    at_measure: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let system =
        kvsim_params::system_from_json(config_json).map_err(|e| to_pyerr(py, &SimError::Config(e.to_string())))?;
    let engine_every = |progress_every: u64| progress_every.clamp(1, SIGNAL_CHECK_EVERY);
    let every = if progress.is_some() { engine_every(progress_every) } else { SIGNAL_CHECK_EVERY };
    // Reports every `report_every` instructions counted from the phase's start (`at_measure` may change it).
    let report_every = AtomicU64::new(if progress.is_some() { progress_every.max(1) } else { u64::MAX });
    let mut next_report = report_every.load(Ordering::Relaxed);
    let mut report_phase = "";
    let mut raised: Option<PyErr> = None;
    let mut measure_raised: Option<PyErr> = None;
    let out = {
        let raised = &mut raised;
        let progress = &progress;
        let measure_raised = &mut measure_raised;
        let report_every = &report_every;
        let mut ask = |at: &Py<PyAny>| -> Result<driver::Measure, SimError> {
            type Answer = Option<(f64, u64, Option<u64>)>;
            let answer = Python::attach(|py| {
                at.call0(py).and_then(|r| {
                    r.extract::<Answer>(py)
                        .or_else(|_| r.extract::<Option<(f64, u64)>>(py).map(|a| a.map(|(f, n)| (f, n, None))))
                })
            });
            match answer {
                Ok(answer) => {
                    let every = answer.and_then(|(_, _, every)| every);
                    if let Some(every) = every {
                        report_every.store(every.max(1), Ordering::Relaxed);
                    }
                    Ok(driver::Measure { load: answer.map(|(f, n, _)| (f, n)), every: every.map(engine_every) })
                }
                Err(e) => {
                    *measure_raised = Some(e);
                    Err(SimError::Bug("the at_measure callback raised".into()))
                }
            }
        };
        let at_measure = &at_measure;
        guarded(py, move || {
            let mut report = |p: &driver::Progress| -> Result<(), SimError> {
                Python::attach(|py| {
                    if py.check_signals().is_err() {
                        // The KeyboardInterrupt is dropped here: models.sim raises its own, with the results.
                        return Err(SimError::Interrupted);
                    }
                    let Some(callback) = progress else { return Ok(()) };
                    if p.phase != report_phase {
                        report_phase = p.phase;
                        next_report = p.phase_insts.saturating_add(report_every.load(Ordering::Relaxed));
                    }
                    if p.insts < next_report {
                        return Ok(());
                    }
                    next_report = p.insts.saturating_add(report_every.load(Ordering::Relaxed));
                    match callback.call1(py, (p.insts, p.sim_ticks, p.phase, p.answered)) {
                        Ok(_) => Ok(()),
                        Err(e) => {
                            *raised = Some(e);
                            Err(SimError::Bug("the progress callback raised".into()))
                        }
                    }
                })
            };
            match system.os_level {
                kvsim_params::SystemOsLevel::Se => {
                    let mut asking = at_measure.as_ref().map(|at| move || ask(at));
                    let asking = asking.as_mut().map(|f| f as driver::AtMeasure);
                    driver::run_system_with_measure(&system, every, &mut report, asking)
                }
                kvsim_params::SystemOsLevel::Fs => full_system::run(&system, every, &mut report),
            }
        })
    };
    if let Some(err) = raised.or(measure_raised) {
        return Err(err);
    }
    output_to_dict(py, &out?)
}

/// What a checkpoint of this configuration (JSON) holds that a restore may not change, as JSON {dotted path:
/// value}: configurations with equal identities share a checkpoint (the sweep runner loads each data set once).
#[pyfunction]
fn checkpoint_identity(py: Python<'_>, config_json: &str) -> PyResult<String> {
    let system =
        kvsim_params::system_from_json(config_json).map_err(|e| to_pyerr(py, &SimError::Config(e.to_string())))?;
    let resolved = serde_json::to_value(&system).map_err(|e| to_pyerr(py, &SimError::Config(e.to_string())))?;
    Ok(checkpoint::identity(&resolved).to_string())
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(checkpoint_identity, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
