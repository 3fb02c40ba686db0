//! The cycle-level SCI ring (1 cycle = 2 ns, one symbol per link per cycle).
//!
//! Per node and cycle, in this order (O(1) work, no allocation):
//! 1. the input queue's consumer finishes a packet every `service_time` cycles (and, with
//!    quiet-window generation ends, the receiver checks its window — done for all nodes
//!    before the node loop, which is equivalent since a receiver only changes its own state);
//! 2. the parser/stripper looks at the symbol arriving on the input link: a send addressed
//!    here is offered to the input queue at its header (the [`Receiver`] decides) and its first
//!    4 slots carry the echo, the rest become idles; an echo addressed here is consumed (at its
//!    last symbol the sender acts on it); a NOTIFY updates the SST (at its last symbol) and is
//!    removed at its origin; everything else passes on;
//! 3. the output multiplexer emits one symbol: the rest of the packet it is sending (own or
//!    bypassed), else the idle that must follow every packet, else — at a packet boundary —
//!    the node's own next packet (a pending NOTIFY first, then a send within the SAT quota)
//!    if the bypass FIFO is empty (register insertion), else the next bypassed packet, else
//!    an idle;
//! 4. the stripper's output, if not idle, enters the bypass FIFO (idles are dropped; that is
//!    how the FIFO drains).
//!
//! After all nodes, the SAT (bandwidth allocation `sat`) moves on or stays.
//!
//! Output of node i at cycle t is the input of node i+1 at cycle t+1. A bypassed packet is
//! forwarded cut-through, one cycle after its header entered the FIFO.
//!
//! Layout: the state every node touches every cycle is packed in one small `Port` per node
//! (so the hot loop walks one array instead of ten); the links, FIFOs, senders, receivers and
//! tables are separate arrays.

mod agent;
mod checks;
mod idle;
mod transmit;

pub use agent::{AgentParams, Fwd, Outbox};

use super::events::Event;
use super::measure::Measure;
use super::traffic::{Arrival, Traffic};
use super::wire::{BypassFifos, FifoCursor, Kind, Wire};
use crate::config::{BandwidthAllocation, SciConfig, TrafficPattern};
use crate::protocol::packet::{ECHO_SYMBOLS, send_symbols};
use crate::protocol::{
    ActiveBuffers, Echo, EchoOutcome, GenerationEnd, NotifyBuffer, Phase, Receiver, ServeState,
    Sst, StateChange,
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
    /// Switched systems: the send's final target (global host id), for hold-back on remote
    /// serve status; [`agent::NO_FIN`] on a plain ring.
    fin: u16,
}

/// Per-node state touched every cycle.
#[derive(Clone, Copy, Debug, Default)]
struct Port {
    /// Own packet being transmitted (header template) and symbols still to send.
    own_tpl: Wire,
    /// The echo replacing the send being stripped here.
    strip_echo: Wire,
    /// This node's bypass FIFO in [`Sim::fifo`].
    fifo: FifoCursor,
    /// Cycle the input queue's consumer finishes its current packet (`u64::MAX` when the
    /// queue is empty, so the hot loop needs one comparison).
    svc_done: u64,
    /// Packets in the input queue.
    inq: u32,
    /// SAT allocation: own sends this node may still start before the SAT's next visit.
    quota: u32,
    own_left: u8,
    /// Forwarding a packet from the bypass FIFO.
    bypassing: bool,
    /// The next output slot must be the idle that follows every packet.
    gap: bool,
    /// Something may have become transmittable since the last fruitless pick.
    tx_dirty: bool,
    /// SAT allocation: started an own send since the SAT last left this node.
    sent_since_sat: bool,
    /// Intelligent receivers: the NOTIFY waiting to be sent.
    notify: NotifyBuffer,
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
    /// `link_in[i]` arrives at node i this cycle; `link_out[i]` next cycle.
    link_in: Vec<Wire>,
    link_out: Vec<Wire>,
    ports: Vec<Port>,
    fifo: BypassFifos,
    /// SAT allocation: where the SAT is (it moves one hop per cycle unless held).
    sat_at: usize,
    sat_quota: u32,
    active: Vec<ActiveBuffers>,
    sendq: Vec<VecDeque<Queued>>,
    recv: Vec<Receiver>,
    epoch_start: Vec<u64>,
    sst: Vec<Sst>,
    traffic: Traffic,
    arrivals: Vec<Arrival>,
    seq: u64,
    outstanding: u64,
    created_symbols: u64,
    removed_symbols: u64,
    injected: u64,
    accepted_total: u64,
    measure: Measure,
    log: Option<Vec<Event>>,
    fault: Option<String>,
    /// Switch agents on this ring (empty for a plain ring): see [`agent`].
    agents: agent::Agents,
}

impl Sim {
    /// Builds the ring for a config (validated here; `intelligent` selects the transmitter).
    pub fn new(cfg: &SciConfig, seed: u64, intelligent: bool) -> Result<Sim, ModelError> {
        cfg.validate()?;
        let n = cfg.nodes;
        let trace = if cfg.traffic.pattern == TrafficPattern::Trace {
            cfg.load_trace()?
        } else {
            Default::default()
        };
        let lens: Vec<u8> = cfg.send_lengths().into_iter().map(|l| l as u8).collect();
        let longest = send_symbols(256, cfg.crc_outside_header);
        let hot =
            (cfg.traffic.pattern == TrafficPattern::Hotspot).then_some(cfg.traffic.hotspot_node);
        let queue_cap = cfg.send_queue_depth.min(4096);
        let port = Port {
            quota: cfg.sat_quota,
            svc_done: u64::MAX,
            ..Port::default()
        };
        Ok(Sim {
            n,
            now: 0,
            measure_start: cfg.warmup_cycles,
            gen_end: cfg.warmup_cycles + cfg.measure_cycles,
            drain_limit: cfg.drain_limit_cycles,
            intelligent,
            quiet_window: matches!(cfg.generation_end(), GenerationEnd::QuietWindow(_)),
            sat: cfg.bandwidth_allocation == BandwidthAllocation::Sat,
            unbounded: cfg.unbounded_queue,
            depth: cfg.queue_depth,
            service_time: cfg.service_time,
            send_queue_depth: cfg.send_queue_depth,
            base_len: send_symbols(0, cfg.crc_outside_header) as u8,
            lens,
            link_in: vec![Wire::IDLE; n],
            link_out: vec![Wire::IDLE; n],
            ports: vec![port; n],
            // Own packet (≤ longest) plus the idle gap plus a margin of one packet.
            fifo: BypassFifos::new(n, 2 * (longest + 2)),
            sat_at: 0,
            sat_quota: cfg.sat_quota,
            active: (0..n)
                .map(|_| ActiveBuffers::new(cfg.active_buffers))
                .collect(),
            sendq: (0..n).map(|_| VecDeque::with_capacity(queue_cap)).collect(),
            recv: (0..n)
                .map(|_| Receiver::new(cfg.receiver, cfg.generation_end()))
                .collect(),
            epoch_start: vec![0; n],
            sst: vec![Sst::new(); n],
            traffic: Traffic::new(cfg, seed, trace),
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
            agents: agent::Agents::default(),
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

    /// Cycles simulated so far.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Sends waiting in node `i`'s send queue (not yet taken by its transmitter).
    pub fn send_queued(&self, i: usize) -> usize {
        self.sendq[i].len()
    }

    /// Sends a node's send queue holds at most.
    pub fn send_queue_depth(&self) -> usize {
        self.send_queue_depth
    }

    /// Sends created and queued (not dropped) so far.
    pub fn injected(&self) -> u64 {
        self.injected
    }

    /// Sends accepted by a receiver so far (whole run).
    pub fn accepted_total(&self) -> u64 {
        self.accepted_total
    }

    /// Non-idle symbols created (own packets when they start, echoes) and not yet removed.
    pub fn live_symbols(&self) -> u64 {
        self.created_symbols - self.removed_symbols
    }

    /// Created and removed symbol totals.
    pub fn symbol_totals(&self) -> (u64, u64) {
        (self.created_symbols, self.removed_symbols)
    }

    /// Runs warm-up, measurement and drain.
    pub fn run(&mut self, progress: &dyn Progress) -> Result<(), ModelError> {
        const CHUNK: u64 = 4096;
        while self.now < self.gen_end {
            let chunk = CHUNK.min(self.gen_end - self.now);
            self.advance(chunk, true);
            progress.advance(chunk);
            self.check_fault()?;
        }
        let limit = self.now + self.drain_limit;
        while !self.quiescent() {
            if self.now >= limit {
                return Err(ModelError::Failed(self.diagnose()));
            }
            self.advance(64, false);
            self.check_fault()?;
        }
        Ok(())
    }

    fn log(&mut self, e: Event) {
        if let Some(l) = &mut self.log {
            l.push(e);
        }
    }

    /// Advances the whole ring by `cycles` cycles (`generate`: create new sends).
    pub fn advance(&mut self, cycles: u64, generate: bool) {
        // The ports and links are taken out of `self` for the loop, so that each node's port
        // is borrowed once while the node's methods use the rest of the ring.
        let mut ports = std::mem::take(&mut self.ports);
        let mut link_in = std::mem::take(&mut self.link_in);
        let mut link_out = std::mem::take(&mut self.link_out);
        let n = ports.len();
        if link_in.len() == n && link_out.len() == n {
            for _ in 0..cycles {
                if generate {
                    self.generate(&mut ports);
                }
                let measuring = self.now >= self.measure_start && self.now < self.gen_end;
                if self.quiet_window {
                    // Time-driven generation ends (a receiver only changes its own state).
                    for (i, port) in ports.iter_mut().enumerate() {
                        if let Some(change) = self.recv[i].tick(self.now) {
                            self.on_state_change(i, port, change, measuring);
                        }
                    }
                }
                for i in 0..n {
                    let out = self.node_step(i, &mut ports[i], link_in[i], measuring);
                    // Node i's output is node i + 1's input next cycle.
                    link_out[if i + 1 == n { 0 } else { i + 1 }] = out;
                }
                std::mem::swap(&mut link_in, &mut link_out);
                if self.sat {
                    self.sat_step(&mut ports);
                }
                self.now += 1;
            }
        }
        self.link_in = link_in;
        self.link_out = link_out;
        self.ports = ports;
    }

    fn generate(&mut self, ports: &mut [Port]) {
        let mut arrivals = std::mem::take(&mut self.arrivals);
        self.traffic.arrivals(self.now, |a| arrivals.push(a));
        if arrivals.is_empty() {
            self.arrivals = arrivals;
            return;
        }
        let measuring = self.now >= self.measure_start;
        for a in arrivals.drain(..) {
            if self.create(a, self.seq, measuring) {
                self.seq += 1;
                ports[usize::from(a.src)].tx_dirty = true;
            }
        }
        self.arrivals = arrivals;
    }

    /// A send created now at `a.src`: counted as generated, then queued as `seq` (returns true)
    /// or dropped at a full send queue (false). The caller marks the source's port dirty.
    fn create(&mut self, a: Arrival, seq: u64, measuring: bool) -> bool {
        let src = usize::from(a.src);
        if measuring {
            self.measure.generated += 1;
            self.measure.per_src_generated[src] += 1;
            self.measure.generated_symbols += u64::from(self.lens[usize::from(a.size_class)]);
        }
        if self.sendq[src].len() >= self.send_queue_depth {
            if measuring {
                self.measure.source_drops += 1;
            }
            let (cycle, src, dst) = (self.now, a.src, a.dst);
            self.log(Event::Dropped { cycle, src, dst });
            return false;
        }
        self.sendq[src].push_back(Queued {
            dst: a.dst,
            size_class: a.size_class,
            created: self.now,
            seq,
            fin: agent::NO_FIN,
        });
        self.outstanding += 1;
        self.injected += 1;
        let (cycle, src, dst) = (self.now, a.src, a.dst);
        self.log(Event::Created {
            cycle,
            seq,
            src,
            dst,
        });
        true
    }

    /// One node's cycle (steps 1–4 of the module doc); returns the symbol it emits.
    #[inline]
    fn node_step(&mut self, i: usize, p: &mut Port, input: Wire, measuring: bool) -> Wire {
        // 1. Input-queue consumer.
        if self.now >= p.svc_done {
            if self.agents.is_agent(i) {
                self.agent_serviced(i, p);
            } else {
                p.inq -= 1;
                p.svc_done = if p.inq > 0 {
                    self.now + self.service_time
                } else {
                    u64::MAX
                };
            }
        }
        // 2. Parser and stripper.
        let me = i as u8;
        let passed = match input.kind() {
            Kind::Idle => Wire::IDLE,
            Kind::Send if input.dst() == me => {
                if input.pos() == 0 {
                    self.strip_send(i, p, input, measuring);
                }
                self.removed_symbols += 1;
                if usize::from(input.pos()) < ECHO_SYMBOLS {
                    self.created_symbols += 1;
                    p.strip_echo.at(input.pos())
                } else {
                    Wire::IDLE
                }
            }
            Kind::Echo if input.dst() == me => {
                self.removed_symbols += 1;
                if input.is_last() {
                    self.on_echo(i, p, input);
                }
                Wire::IDLE
            }
            Kind::Notify if input.src() == me => {
                self.removed_symbols += 1;
                if input.is_last() {
                    let cycle = self.now;
                    self.log(Event::NotifyRemoved { cycle, node: me });
                }
                Wire::IDLE
            }
            Kind::Notify if input.buf() != 0 => {
                if input.is_last() {
                    self.remote_notify(i, p, input);
                }
                input
            }
            Kind::Notify => {
                if input.is_last() {
                    let change = StateChange::from_code(u16::from(input.status()));
                    self.sst[i].apply(usize::from(input.src()), change);
                    p.tx_dirty = true;
                    let (cycle, about) = (self.now, input.src());
                    self.log(Event::NotifySeen {
                        cycle,
                        node: me,
                        about,
                        change,
                    });
                }
                input
            }
            _ => input,
        };
        // 3. Output multiplexer.
        let out = if p.own_left > 0 {
            let pos = p.own_tpl.packet_len() - p.own_left;
            p.own_left -= 1;
            p.gap = p.own_left == 0;
            p.own_tpl.at(pos)
        } else if p.bypassing {
            match self.fifo.pop(i, &mut p.fifo) {
                Some(w) => {
                    if w.is_last() {
                        p.bypassing = false;
                        p.gap = true;
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
        } else if p.gap {
            p.gap = false;
            Wire::IDLE
        } else if let Some(tpl) = self.pick_own(i, p, measuring) {
            p.own_tpl = tpl;
            p.own_left = tpl.packet_len() - 1;
            self.created_symbols += u64::from(tpl.packet_len());
            tpl.at(0)
        } else if let Some(w) = self.fifo.pop(i, &mut p.fifo) {
            if w.is_last() {
                p.gap = true;
            } else {
                p.bypassing = true;
            }
            w
        } else {
            Wire::IDLE
        };
        // 4. Bypass FIFO input.
        if !passed.is_idle() && !self.fifo.push(i, &mut p.fifo, passed) {
            self.fault = Some(format!(
                "node {i}: bypass FIFO overflow at cycle {}",
                self.now
            ));
        }
        out
    }

    /// The stripper offers a send's header to the input queue and prepares the echo.
    fn strip_send(&mut self, i: usize, p: &mut Port, w: Wire, measuring: bool) {
        let agent = self.agents.is_agent(i);
        let free = if agent {
            self.agents.depth() - p.inq as usize
        } else if self.unbounded {
            usize::MAX
        } else {
            self.depth - p.inq as usize
        };
        let phase = Phase::from_code(u16::from(w.status()));
        let d = self.recv[i].on_send(phase, free, self.now);
        if d.echo == Echo::Done {
            if agent {
                self.agent_accept(i, p, w);
            } else {
                p.inq += 1;
                if p.inq == 1 {
                    p.svc_done = self.now + self.service_time;
                }
                if self.agents.external() {
                    self.host_accept(i, w);
                }
            }
            self.accepted_total += 1;
            if measuring {
                let m = &mut self.measure;
                let src = usize::from(w.src());
                let bytes = 2 * u64::from(w.packet_len() - self.base_len);
                m.accepted += 1;
                m.accepted_symbols += u64::from(w.packet_len());
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
        p.strip_echo = Wire::header(
            Kind::Echo,
            ECHO_SYMBOLS as u8,
            d.echo as u8,
            w.src(),
            i as u8,
            w.buf(),
        );
        if self.log.is_some() {
            let seq = self.active[usize::from(w.src())]
                .get(usize::from(w.buf()))
                .seq;
            self.log(Event::Stripped {
                cycle: self.now,
                seq,
                node: i as u8,
                phase,
                echo: d.echo,
                ps_disallow: d.ps_disallow,
            });
        }
        if let Some(change) = d.change {
            self.on_state_change(i, p, change, measuring);
        }
    }

    /// Epoch bookkeeping, and the NOTIFY an intelligent receiver posts.
    fn on_state_change(&mut self, i: usize, p: &mut Port, change: StateChange, measuring: bool) {
        let since = (self.now - self.epoch_start[i]) as f64;
        match change.to() {
            ServeState::A | ServeState::B => self.epoch_start[i] = self.now,
            ServeState::Nb if measuring => self.measure.epoch_a.add(since),
            ServeState::Na if measuring => self.measure.epoch_b.add(since),
            _ => {}
        }
        if self.intelligent {
            p.notify.post(change);
            p.tx_dirty = true;
        }
        let cycle = self.now;
        self.log(Event::StateChanged {
            cycle,
            node: i as u8,
            change,
        });
    }

    /// The source consumes an echo of one of its sends.
    fn on_echo(&mut self, i: usize, p: &mut Port, w: Wire) {
        let echo = Echo::ALL[usize::from(w.status())];
        match self.active[i].echo(usize::from(w.buf()), echo) {
            Ok((outcome, send)) => {
                let (cycle, seq) = (self.now, send.seq);
                self.log(Event::EchoReceived {
                    cycle,
                    seq,
                    node: i as u8,
                    echo,
                });
                if outcome == EchoOutcome::Free {
                    self.outstanding -= 1;
                    if self.agents.external() {
                        self.hop_done(i, &send);
                    }
                    if send.created >= self.measure_start && send.created < self.gen_end {
                        let delay = self.now - send.created;
                        let m = &mut self.measure;
                        m.per_src_delay[i].add(delay);
                        m.retries += u64::from(send.transmissions - 1);
                        m.completed += 1;
                    }
                }
                p.tx_dirty = true;
            }
            Err(e) => self.fault = Some(format!("node {i}: {e} at cycle {}", self.now)),
        }
    }
}
