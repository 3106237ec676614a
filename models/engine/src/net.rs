//! The network side of a machine: the NIC (functional model) and the ghost client, stepped between scheduling
//! quanta: the NIC sends what the TX rings hold to the client, the client checks it and sends new frames, and the
//! NIC moves frames from its RX FIFOs into the RX rings.

use crate::client::{Client, ClientConfig, ClientEvent};
use crate::error::SimError;
use crate::mem::Memory;
use crate::nic::{DmaFault, Nic, NicRegs};

/// What the machine should do after a network step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetEvent {
    Nothing,
    MeasureStart,
    ClientDone,
}

pub struct Net {
    pub nic: Nic,
    pub client: Option<Client>,
    /// Queue of each hart (None: it owns none) and port of each queue.
    pub hart_queue: Vec<Option<usize>>,
    pub queue_port: Vec<u64>,
    /// Instructions (all harts) when the measured phase started.
    pub measure_insts: Option<u64>,
}

/// Simulated time for a step in detailed timing.
pub struct Clock<'a> {
    /// The least time of the live harts (ps): events up to it happen.
    pub now: u64,
    /// Per queue: the time of the hart that owns it (its doorbells rang by then).
    pub queue_time: &'a [u64],
    /// The memory system as the NIC's DMA sees it.
    pub io: crate::nictime::IoFn<'a>,
}

pub enum StepError {
    Dma(DmaFault),
    Client(String),
}

impl Net {
    /// Build the NIC (and the client, if enabled) for `harts` harts; returns the register file for `Memory`.
    pub fn new(
        nic: &kvsim_params::Nic,
        client: Option<&kvsim_params::Client>,
        harts: usize,
        argv: &[String],
    ) -> Result<(Net, NicRegs), SimError> {
        let cfg = |m: String| SimError::Config(m);
        let nq = if nic.queues == 0 { harts } else { nic.queues as usize };
        let ports = nic.ports.max(1) as usize;
        if nq == 0 || nq as u64 > crate::nic::MAX_QUEUES {
            return Err(cfg(format!("Nic: {nq} queues; the device range holds 1..=1024")));
        }
        if ports > nq {
            return Err(cfg(format!("Nic: {ports} ports but only {nq} queues")));
        }
        let queue_port: Vec<u64> = (0..nq).map(|q| (q * ports / nq) as u64).collect();
        let hart_queue: Vec<Option<usize>> = (0..harts).map(|h| (h < nq).then_some(h)).collect();
        let steer: Vec<usize> = hart_queue.iter().flatten().copied().collect();
        let base = u16::try_from(nic.steering_base_port).map_err(|_| cfg("Nic.steering_base_port > 65535".into()))?;
        let mut model = Nic::new(ports, queue_port.clone(), &steer, base, nic.rx_fifo_frames.max(1) as usize);
        model.timing = Some(crate::nictime::NicTiming::new(nic, ports, nq));
        let client = match client {
            Some(p) => {
                if steer.len() < harts {
                    return Err(cfg(format!(
                        "the ghost client needs a NIC queue for every hart: {harts} harts, {nq} queues"
                    )));
                }
                let qp = queue_port.iter().map(|&p| p as usize).collect();
                Some(Client::new(ClientConfig::resolve(p, argv, harts, base, steer.clone(), qp).map_err(cfg)?))
            }
            None => None,
        };
        let regs = NicRegs::new(&queue_port);
        Ok((Net { nic: model, client, hart_queue, queue_port, measure_insts: None }, regs))
    }

    /// One step between quanta.
    pub fn step(&mut self, mem: &mut Memory, total_insts: u64, clock: Option<Clock>) -> Result<NetEvent, StepError> {
        let mut regs = mem.nic.take().expect("a machine with a NIC has its registers");
        let r = self.step_with(&mut regs, mem, total_insts, clock);
        mem.nic = Some(regs);
        r
    }

    fn step_with(
        &mut self,
        regs: &mut NicRegs,
        mem: &mut Memory,
        total_insts: u64,
        mut clock: Option<Clock>,
    ) -> Result<NetEvent, StepError> {
        let mut sent = Vec::new();
        match clock.as_mut() {
            Some(c) => self.nic.transmit_timed(regs, mem, c.queue_time, c.io, &mut sent).map_err(StepError::Dma)?,
            None => {
                let mut plain = Vec::new();
                self.nic.transmit(regs, mem, &mut plain).map_err(StepError::Dma)?;
                sent.extend(plain.into_iter().map(|(q, f)| (q, f, 0)));
            }
        }
        let now = clock.as_ref().map(|c| c.now);
        let mut event = NetEvent::Nothing;
        if let Some(c) = self.client.as_mut() {
            let dropped = self.nic.timing.as_mut().map(|t| std::mem::take(&mut t.dropped)).unwrap_or_default();
            match c.step(&mut self.nic, regs, sent, dropped, total_insts, now).map_err(StepError::Client)? {
                ClientEvent::Nothing => {}
                ClientEvent::MeasureStart => {
                    c.reset_stats();
                    self.nic.reset_stats(regs);
                    if let Some(t) = self.nic.timing.as_mut() {
                        t.reset_stats();
                    }
                    self.measure_insts = Some(total_insts);
                    event = NetEvent::MeasureStart;
                }
                ClientEvent::Done => event = NetEvent::ClientDone,
            }
        }
        match clock {
            Some(c) => self.nic.advance(regs, mem, c.now, c.io).map_err(StepError::Dma)?,
            None => self.nic.deliver(regs, mem).map_err(StepError::Dma)?,
        }
        Ok(event)
    }

    /// Statistics of the NIC and the client; `insts` is the instruction count of the measured phase.
    pub fn stats(&self, regs: &NicRegs, measured_insts: u64) -> Vec<(String, f64, &'static str)> {
        let mut out = self.nic.stats(regs);
        self.nic.timing_stats(&mut out);
        if let Some(c) = &self.client {
            out.extend(c.stats());
            let req = c.stats.requests;
            let per = if req > 0 { measured_insts as f64 / req as f64 } else { 0.0 };
            out.push((
                "client.insts_per_request".into(),
                per,
                "instructions of all harts in the measured phase per measured request (idle polling included; \
                 run with get_ratio 1.0 or 0.0 for GETs or PUTs alone)",
            ));
        }
        out
    }
}
