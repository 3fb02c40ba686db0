//! The cycle-level SCI ring (1 cycle = 2 ns, one symbol per link per cycle).
//!
//! Per node and cycle, in this order (O(1) work, no allocation):
//! 1. the input queue's consumer finishes a packet every `service_time` cycles;
//! 2. the parser/stripper looks at the symbol arriving on the input link: a send addressed
//!    here is offered to the input queue at its header (the [`Receiver`] decides) and its first
//!    4 slots carry the echo, the rest become idles; an echo addressed here is consumed (at its
//!    last symbol the sender acts on it); a NOTIFY updates the SST (at its last symbol) and is
//!    removed at its origin; everything else passes on;
//! 3. the output multiplexer emits one symbol: the rest of the packet it is sending (own or
//!    bypassed), else the idle that must follow every packet, else — at a packet boundary —
//!    the node's own next packet if the bypass FIFO is empty (register insertion), else the
//!    next bypassed packet, else an idle;
//! 4. the stripper's output, if not idle, enters the bypass FIFO (idles are dropped; that is
//!    how the FIFO drains).
//!
//! Output of node i at cycle t is the input of node i+1 at cycle t+1. A bypassed packet is
//! forwarded cut-through, one cycle after its header entered the FIFO.

use super::events::Event;
use super::measure::Measure;
use super::traffic::{Arrival, Traffic};
use super::wire::{BypassFifos, Kind, Wire};
use crate::config::{BandwidthAllocation, Pattern, SciConfig};
use crate::protocol::packet::{ECHO_SYMBOLS, send_symbols};
use crate::protocol::{
    ActiveBuffers, Echo, EchoOutcome, NotifyBuffer, Phase, Receiver, ServeState, SlotState, Sst,
    StateChange, allowed,
};
use icn_engine::{ModelError, Progress};
use std::collections::VecDeque;

/// A created send waiting in its source's send queue.
#[derive(Clone, Copy, Debug)]
struct Queued {
    dst: u8,
    size_class: u8,
    created: u64,
    seq: u64,
}

/// What the transmitter picked.
enum Pick {
    Retry(usize),
    New(usize),
}

/// One replication of the ring.
pub struct Sim {
    n: usize,
    now: u64,
    measure_start: u64,
    gen_end: u64,
    drain_limit: u64,
    intelligent: bool,
    quiet_window: bool,
    sat: bool,
    unbounded: bool,
    depth: usize,
    service_time: u64,
    send_queue_depth: usize,
    lens: Vec<u8>,
    /// Send symbols minus data symbols (8, or 9 with `crc_outside_header`).
    base_len: u8,
    // Links: `link_in[i]` arrives at node i this cycle; `link_out[i]` next cycle.
    link_in: Vec<Wire>,
    link_out: Vec<Wire>,
    // Stripper: the echo replacing the send being stripped at each node.
    strip_echo: Vec<Wire>,
    // Output multiplexer.
    own_tpl: Vec<Wire>,
    own_left: Vec<u8>,
    bypassing: Vec<bool>,
    gap: Vec<bool>,
    fifo: BypassFifos,
    /// SAT allocation: own sends a node may still start before the SAT next visits it.
    quota: Vec<u32>,
    /// SAT allocation: the node has started an own send since the SAT last left it.
    sent_since_sat: Vec<bool>,
    /// SAT allocation: where the SAT is (it moves one hop per cycle unless held).
    sat_at: usize,
    sat_quota: u32,
    // Transmitter.
    active: Vec<ActiveBuffers>,
    sendq: Vec<VecDeque<Queued>>,
    /// Something may have become transmittable since the last fruitless pick.
    tx_dirty: Vec<bool>,
    // Receiver.
    recv: Vec<Receiver>,
    inq: Vec<u32>,
    svc_done: Vec<u64>,
    epoch_start: Vec<u64>,
    // Intelligent A/B aging.
    sst: Vec<Sst>,
    notify: Vec<NotifyBuffer>,
    traffic: Traffic,
    arrivals: Vec<Arrival>,
    // Accounting.
    seq: u64,
    outstanding: u64,
    created_symbols: u64,
    removed_symbols: u64,
    injected: u64,
    accepted_total: u64,
    measure: Measure,
    log: Option<Vec<Event>>,
    fault: Option<String>,
}

impl Sim {
    /// Builds the ring for a validated config (`intelligent` selects the transmitter).
    pub fn new(cfg: &SciConfig, seed: u64, intelligent: bool) -> Result<Sim, ModelError> {
        cfg.validate()?;
        let n = cfg.nodes;
        let trace = if cfg.traffic.pattern == Pattern::Trace {
            cfg.load_trace()?
        } else {
            Default::default()
        };
        let lens: Vec<u8> = cfg.send_lengths().into_iter().map(|l| l as u8).collect();
        let longest = send_symbols(256, cfg.crc_outside_header);
        let hot = (cfg.traffic.pattern == Pattern::Hotspot).then_some(cfg.traffic.hotspot_node);
        let measure_start = cfg.warmup_cycles;
        let gen_end = cfg.warmup_cycles + cfg.measure_cycles;
        let queue_cap = cfg.send_queue_depth.min(4096);
        Ok(Sim {
            n,
            now: 0,
            measure_start,
            gen_end,
            drain_limit: cfg.drain_limit_cycles,
            intelligent,
            sat: cfg.bandwidth_allocation == BandwidthAllocation::Sat,
            quiet_window: matches!(
                cfg.generation_end(),
                crate::protocol::GenerationEnd::QuietWindow(_)
            ),
            unbounded: cfg.unbounded_queue,
            depth: cfg.queue_depth,
            service_time: cfg.service_time,
            send_queue_depth: cfg.send_queue_depth,
            base_len: send_symbols(0, cfg.crc_outside_header) as u8,
            lens,
            link_in: vec![Wire::IDLE; n],
            link_out: vec![Wire::IDLE; n],
            strip_echo: vec![Wire::IDLE; n],
            own_tpl: vec![Wire::IDLE; n],
            own_left: vec![0; n],
            bypassing: vec![false; n],
            gap: vec![false; n],
            quota: vec![cfg.sat_quota; n],
            sent_since_sat: vec![false; n],
            sat_at: 0,
            sat_quota: cfg.sat_quota,
            // Own packet (≤ longest) plus the idle gap plus a margin of one packet.
            fifo: BypassFifos::new(n, 2 * (longest + 2)),
            active: (0..n)
                .map(|_| ActiveBuffers::new(cfg.active_buffers))
                .collect(),
            sendq: (0..n).map(|_| VecDeque::with_capacity(queue_cap)).collect(),
            tx_dirty: vec![false; n],
            recv: (0..n)
                .map(|_| Receiver::new(cfg.receiver, cfg.generation_end()))
                .collect(),
            inq: vec![0; n],
            svc_done: vec![0; n],
            epoch_start: vec![0; n],
            sst: vec![Sst::new(); n],
            notify: vec![NotifyBuffer::default(); n],
            traffic: super::traffic::Traffic::new(cfg, seed, trace),
            arrivals: Vec::with_capacity(n),
            seq: 0,
            outstanding: 0,
            created_symbols: 0,
            removed_symbols: 0,
            injected: 0,
            accepted_total: 0,
            measure: Measure::new(n, cfg.measure_cycles, hot),
            log: None,
            fault: None,
        })
    }

    /// Turns on the event log (tests and checkers).
    pub fn enable_log(&mut self) {
        self.log = Some(Vec::new());
    }

    pub fn events(&self) -> &[Event] {
        self.log.as_deref().unwrap_or(&[])
    }

    pub fn measure(&self) -> &Measure {
        &self.measure
    }

    pub fn now(&self) -> u64 {
        self.now
    }

    /// Sends created and queued (not dropped) so far.
    pub fn injected(&self) -> u64 {
        self.injected
    }

    /// Sends accepted by a receiver so far (whole run).
    pub fn accepted_total(&self) -> u64 {
        self.accepted_total
    }

    /// Non-idle symbols (counted when a packet or echo is created) not yet removed.
    pub fn live_symbols(&self) -> u64 {
        self.created_symbols - self.removed_symbols
    }

    /// Created and removed symbol totals.
    pub fn symbol_totals(&self) -> (u64, u64) {
        (self.created_symbols, self.removed_symbols)
    }

    /// Nothing left anywhere: no send outstanding, no symbol on a link or in a FIFO, no NOTIFY
    /// waiting.
    pub fn quiescent(&self) -> bool {
        self.outstanding == 0
            && self.created_symbols == self.removed_symbols
            && self.notify.iter().all(|b| !b.is_pending())
    }

    /// Checks the structural invariants that must hold once quiescent; describes the first
    /// violation.
    pub fn check_quiescent_state(&self) -> Result<(), String> {
        for i in 0..self.n {
            let problems = [
                (!self.link_in[i].is_idle(), "a symbol on its input link"),
                (!self.fifo.is_empty(i), "a non-empty bypass FIFO"),
                (self.own_left[i] != 0, "an own packet half-sent"),
                (!self.active[i].is_idle(), "an occupied active buffer"),
                (!self.sendq[i].is_empty(), "a non-empty send queue"),
            ];
            if let Some((_, what)) = problems.iter().find(|(bad, _)| *bad) {
                return Err(format!("node {i} has {what} at cycle {}", self.now));
            }
        }
        Ok(())
    }

    /// Runs warm-up, measurement and drain.
    pub fn run(&mut self, progress: &dyn Progress) -> Result<(), ModelError> {
        const CHUNK: u64 = 4096;
        while self.now < self.gen_end {
            let chunk = CHUNK.min(self.gen_end - self.now);
            for _ in 0..chunk {
                self.step(true);
            }
            progress.advance(chunk);
            self.check_fault()?;
        }
        let limit = self.now + self.drain_limit;
        while !self.quiescent() {
            if self.now >= limit {
                return Err(ModelError::Failed(self.diagnose()));
            }
            for _ in 0..64 {
                self.step(false);
            }
            self.check_fault()?;
        }
        Ok(())
    }

    fn check_fault(&self) -> Result<(), ModelError> {
        match &self.fault {
            Some(f) => Err(ModelError::Failed(format!(
                "SCI simulator invariant violated: {f}"
            ))),
            None => Ok(()),
        }
    }

    fn diagnose(&self) -> String {
        let nodes: Vec<String> = (0..self.n)
            .map(|i| {
                format!(
                    "node {i}: {} queued, {} active, receiver {:?} reservations {:?}, input queue {}",
                    self.sendq[i].len(),
                    self.active[i].capacity() - self.active[i].free_count(),
                    self.recv[i].state(),
                    self.recv[i].reservations(),
                    self.inq[i],
                )
            })
            .collect();
        let links: Vec<String> = (0..self.n)
            .filter(|&i| !self.link_in[i].is_idle() || !self.fifo.is_empty(i) || self.own_left[i] > 0)
            .map(|i| {
                format!(
                    "node {i}: input {:?}, FIFO {} symbols, own packet {} symbols left, bypassing {}",
                    self.link_in[i],
                    self.fifo.len(i),
                    self.own_left[i],
                    self.bypassing[i]
                )
            })
            .collect();
        format!(
            "drain did not finish within drain_limit_cycles = {}: {} sends still outstanding, {} symbols on the ring; {}; ring: {}",
            self.drain_limit,
            self.outstanding,
            self.live_symbols(),
            nodes.join("; "),
            links.join("; ")
        )
    }

    fn log(&mut self, e: Event) {
        if let Some(l) = &mut self.log {
            l.push(e);
        }
    }

    /// Advances the whole ring by one cycle.
    pub fn step(&mut self, generate: bool) {
        if generate {
            self.generate();
        }
        let measuring = self.now >= self.measure_start && self.now < self.gen_end;
        for i in 0..self.n {
            self.node_step(i, measuring);
        }
        if self.sat {
            self.sat_step();
        }
        std::mem::swap(&mut self.link_in, &mut self.link_out);
        self.now += 1;
    }

    /// SAT fairness (MetaRing): the SAT stays at a node that still wants to send but has
    /// not sent since the SAT's last visit; otherwise the node gets a fresh quota and the SAT
    /// moves on to the downstream node (arriving next cycle). Holding the SAT starves the
    /// other nodes of quota, which drains the ring until the holder can insert.
    fn sat_step(&mut self) {
        let i = self.sat_at;
        let starving = self.tx_dirty[i] && !self.sent_since_sat[i];
        if !starving {
            self.quota[i] = self.sat_quota;
            self.sent_since_sat[i] = false;
            self.sat_at = if i + 1 == self.n { 0 } else { i + 1 };
        }
    }

    fn generate(&mut self) {
        let mut arrivals = std::mem::take(&mut self.arrivals);
        self.traffic.arrivals(self.now, |a| arrivals.push(a));
        let measuring = self.now >= self.measure_start;
        for a in arrivals.drain(..) {
            let src = usize::from(a.src);
            if measuring {
                self.measure.generated += 1;
                self.measure.generated_symbols += u64::from(self.lens[usize::from(a.size_class)]);
            }
            if self.sendq[src].len() >= self.send_queue_depth {
                if measuring {
                    self.measure.source_drops += 1;
                }
                self.log(Event::Dropped {
                    cycle: self.now,
                    src: a.src,
                    dst: a.dst,
                });
                continue;
            }
            let seq = self.seq;
            self.seq += 1;
            self.sendq[src].push_back(Queued {
                dst: a.dst,
                size_class: a.size_class,
                created: self.now,
                seq,
            });
            self.outstanding += 1;
            self.injected += 1;
            self.tx_dirty[src] = true;
            self.log(Event::Created {
                cycle: self.now,
                seq,
                src: a.src,
                dst: a.dst,
            });
        }
        self.arrivals = arrivals;
    }

    #[inline]
    fn node_step(&mut self, i: usize, measuring: bool) {
        // 1. Input-queue consumer.
        if self.inq[i] > 0 && self.now >= self.svc_done[i] {
            self.inq[i] -= 1;
            if self.inq[i] > 0 {
                self.svc_done[i] = self.now + self.service_time;
            }
        }
        if self.quiet_window
            && let Some(change) = self.recv[i].tick(self.now)
        {
            self.on_state_change(i, change, measuring);
        }
        // 2. Parser and stripper.
        let input = self.link_in[i];
        let me = i as u8;
        let passed = match input.kind {
            Kind::Idle => Wire::IDLE,
            Kind::Send if input.dst == me => {
                if input.pos == 0 {
                    self.strip_send(i, input, measuring);
                }
                self.removed_symbols += 1;
                if usize::from(input.pos) < ECHO_SYMBOLS {
                    self.created_symbols += 1;
                    self.strip_echo[i].at(input.pos)
                } else {
                    Wire::IDLE
                }
            }
            Kind::Echo if input.dst == me => {
                self.removed_symbols += 1;
                if input.is_last() {
                    self.on_echo(i, input);
                }
                Wire::IDLE
            }
            Kind::Notify if input.src == me => {
                self.removed_symbols += 1;
                if input.is_last() {
                    self.log(Event::NotifyRemoved {
                        cycle: self.now,
                        node: me,
                    });
                }
                Wire::IDLE
            }
            Kind::Notify => {
                if input.is_last() {
                    let change = StateChange::from_code(u16::from(input.status));
                    self.sst[i].apply(usize::from(input.src), change);
                    self.tx_dirty[i] = true;
                    self.log(Event::NotifySeen {
                        cycle: self.now,
                        node: me,
                        about: input.src,
                        change,
                    });
                }
                input
            }
            _ => input,
        };
        // 3. Output multiplexer.
        let out = if self.own_left[i] > 0 {
            let tpl = self.own_tpl[i];
            let pos = tpl.len - self.own_left[i];
            self.own_left[i] -= 1;
            self.gap[i] = self.own_left[i] == 0;
            tpl.at(pos)
        } else if self.bypassing[i] {
            match self.fifo.pop(i) {
                Some(w) => {
                    if w.is_last() {
                        self.bypassing[i] = false;
                        self.gap[i] = true;
                    }
                    w
                }
                None => {
                    self.fault = Some(format!(
                        "node {i}: bypass FIFO ran dry inside a packet at cycle {}",
                        self.now
                    ));
                    Wire::IDLE
                }
            }
        } else if self.gap[i] {
            self.gap[i] = false;
            Wire::IDLE
        } else if let Some(tpl) = self.pick_own(i, measuring) {
            self.own_tpl[i] = tpl;
            self.own_left[i] = tpl.len - 1;
            self.created_symbols += u64::from(tpl.len);
            tpl.at(0)
        } else if let Some(w) = self.fifo.pop(i) {
            if w.is_last() {
                self.gap[i] = true;
            } else {
                self.bypassing[i] = true;
            }
            w
        } else {
            Wire::IDLE
        };
        if measuring && out.kind == Kind::Notify {
            self.measure.notify_symbols += 1;
        }
        // 4. Bypass FIFO input.
        if !passed.is_idle() && !self.fifo.push(i, passed) {
            self.fault = Some(format!(
                "node {i}: bypass FIFO overflow at cycle {}",
                self.now
            ));
        }
        let next = if i + 1 == self.n { 0 } else { i + 1 };
        self.link_out[next] = out;
    }

    /// The stripper offers a send's header to the input queue and prepares the echo.
    fn strip_send(&mut self, i: usize, w: Wire, measuring: bool) {
        let free = if self.unbounded {
            usize::MAX
        } else {
            self.depth - self.inq[i] as usize
        };
        let phase = Phase::from_code(u16::from(w.status));
        let d = self.recv[i].on_send(phase, free, self.now);
        if d.echo == Echo::Done {
            self.inq[i] += 1;
            if self.inq[i] == 1 {
                self.svc_done[i] = self.now + self.service_time;
            }
            self.accepted_total += 1;
            if measuring {
                let m = &mut self.measure;
                let src = usize::from(w.src);
                let bytes = 2 * u64::from(w.len - self.base_len);
                m.accepted += 1;
                m.accepted_symbols += u64::from(w.len);
                m.accepted_bytes += bytes;
                m.per_src_bytes[src] += bytes;
                m.per_src_accepted[src] += 1;
                if m.hot_node == Some(i) {
                    m.hot_accepted_by_src[src] += 1;
                }
            }
        } else if measuring {
            self.measure.busy_echoes += 1;
        }
        if d.ps_disallow && measuring {
            self.measure.ps_disallow += 1;
        }
        self.strip_echo[i] = Wire {
            kind: Kind::Echo,
            pos: 0,
            len: ECHO_SYMBOLS as u8,
            status: d.echo as u8,
            dst: w.src,
            src: i as u8,
            buf: w.buf,
        };
        if self.log.is_some() {
            let seq = self.active[usize::from(w.src)].get(usize::from(w.buf)).seq;
            let e = Event::Stripped {
                cycle: self.now,
                seq,
                node: i as u8,
                phase,
                echo: d.echo,
                ps_disallow: d.ps_disallow,
            };
            self.log(e);
        }
        if let Some(change) = d.change {
            self.on_state_change(i, change, measuring);
        }
    }

    fn on_state_change(&mut self, i: usize, change: StateChange, measuring: bool) {
        match change.to() {
            ServeState::A | ServeState::B => self.epoch_start[i] = self.now,
            ServeState::Nb if measuring => self
                .measure
                .epoch_a
                .add((self.now - self.epoch_start[i]) as f64),
            ServeState::Na if measuring => self
                .measure
                .epoch_b
                .add((self.now - self.epoch_start[i]) as f64),
            _ => {}
        }
        if self.intelligent {
            self.notify[i].post(change);
        }
        self.log(Event::StateChanged {
            cycle: self.now,
            node: i as u8,
            change,
        });
    }

    /// The source consumes an echo of one of its sends.
    fn on_echo(&mut self, i: usize, w: Wire) {
        let echo = Echo::ALL[usize::from(w.status)];
        match self.active[i].echo(usize::from(w.buf), echo) {
            Ok((outcome, send)) => {
                self.log(Event::EchoReceived {
                    cycle: self.now,
                    seq: send.seq,
                    node: i as u8,
                    echo,
                });
                if outcome == EchoOutcome::Free {
                    self.outstanding -= 1;
                    if send.created >= self.measure_start && send.created < self.gen_end {
                        let delay = self.now - send.created;
                        let m = &mut self.measure;
                        m.delay.add(delay);
                        m.per_src_delay[i].add(delay);
                        m.retries += u64::from(send.transmissions - 1);
                        m.completed += 1;
                    }
                }
                self.tx_dirty[i] = true;
            }
            Err(e) => self.fault = Some(format!("node {i}: {e} at cycle {}", self.now)),
        }
    }

    /// May node `i` send a packet with `phase` to `dst` now? Always for the standard
    /// transmitter; per the SST for the intelligent one.
    #[inline]
    fn eligible(&self, i: usize, dst: u8, phase: Phase) -> bool {
        !self.intelligent || allowed(self.sst[i].get(usize::from(dst)), phase)
    }

    /// The transmitter's choice at a packet boundary with an empty bypass FIFO: a pending
    /// NOTIFY first, else the oldest eligible send (busied retries and queued new sends
    /// compete by creation time; new sends need a free active buffer). The intelligent
    /// transmitter skips held-back sends instead of waiting behind them (skip-ahead).
    fn pick_own(&mut self, i: usize, measuring: bool) -> Option<Wire> {
        if !self.fifo.is_empty(i) {
            return None;
        }
        if let Some(change) = self.notify[i].take() {
            self.log(Event::NotifySent {
                cycle: self.now,
                node: i as u8,
                change,
            });
            let me = i as u8;
            return Some(Wire {
                kind: Kind::Notify,
                pos: 0,
                len: ECHO_SYMBOLS as u8,
                status: change.code() as u8,
                dst: me,
                src: me,
                buf: 0,
            });
        }
        if !self.tx_dirty[i] || (self.sat && self.quota[i] == 0) {
            return None;
        }
        let mut best: Option<(u64, Pick)> = None;
        if self.active[i].ready_count() > 0 {
            for (slot, s) in self.active[i].slots().iter().enumerate() {
                if s.state == SlotState::Ready
                    && self.eligible(i, s.target, s.phase)
                    && best.as_ref().is_none_or(|(t, _)| s.created < *t)
                {
                    best = Some((s.created, Pick::Retry(slot)));
                }
            }
        }
        if self.active[i].free_count() > 0 {
            for (k, q) in self.sendq[i].iter().enumerate() {
                if self.eligible(i, q.dst, Phase::NoTry) {
                    if best.as_ref().is_none_or(|(t, _)| q.created < *t) {
                        best = Some((q.created, Pick::New(k)));
                    }
                    break;
                }
                if !self.intelligent {
                    break;
                }
            }
        }
        let Some((_, pick)) = best else {
            self.tx_dirty[i] = false;
            return None;
        };
        let (slot, send) = match pick {
            Pick::Retry(slot) => match self.active[i].retransmit(slot) {
                Ok(s) => (slot, *s),
                Err(e) => {
                    self.fault = Some(format!("node {i}: {e}"));
                    return None;
                }
            },
            Pick::New(k) => {
                let q = self.sendq[i].remove(k)?;
                match self.active[i].start(q.dst, q.size_class, q.created, q.seq) {
                    Ok(slot) => (slot, *self.active[i].get(slot)),
                    Err(e) => {
                        self.fault = Some(format!("node {i}: {e}"));
                        return None;
                    }
                }
            }
        };
        if measuring {
            self.measure.transmitted += 1;
        }
        if self.sat {
            self.quota[i] -= 1;
            self.sent_since_sat[i] = true;
        }
        self.log(Event::Transmit {
            cycle: self.now,
            seq: send.seq,
            src: i as u8,
            dst: send.target,
            phase: send.phase,
        });
        Some(Wire {
            kind: Kind::Send,
            pos: 0,
            len: self.lens[usize::from(send.size_class)],
            status: send.phase.code() as u8,
            dst: send.target,
            src: i as u8,
            buf: slot as u16,
        })
    }
}
