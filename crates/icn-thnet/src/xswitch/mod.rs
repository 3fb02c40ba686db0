//! A TH-Net network at symbol level: X-Switches and X-NIAs wired by X-Links, one clock at a
//! time.
//!
//! Layout (DESIGN.md principle 2): every port is an index `sw * 5 + port`; per-port state
//! lives in flat vectors (FIFOs, flow control, output machines, "stopped" flags), and every
//! channel is a delay line of `link_delay` slots in one flat vector. Channel `c < 5·S` is the
//! output of switch port `c`; channel `5·S + n` is NIA `n`'s output. A cycle is
//!
//! 1. **receive**: each channel delivers the symbol sent `link_delay` cycles ago. At a switch
//!    input, `ID-STOP`/`ID-GO` set/clear the "stopped" flag of the output port of the same
//!    link (the reverse direction) and everything else but `ID-IDLE` enters the FIFO, whose
//!    hysteresis may now want a STOP; at an NIA the symbol goes to its receiver;
//! 2. **send**: each switch output runs its [`OutputFsm`] (pending flow-control characters
//!    first), each NIA sends its next frame symbol unless stopped.
//!
//! A symbol can therefore cross a switch in the cycle it arrives (cut-through) once its
//! output is bound. The run never hangs: [`XNet::step`] fails with a wait-for diagnosis
//! when frames are in flight and no frame symbol has moved for `watchdog` cycles.

use crate::fifo::{Fifo, FlowControl, check_thresholds};
use crate::frame::Check;
use crate::nia::{Delivered, Nia, Started};
use crate::outport::{Head, OutAction, OutState, OutView, OutputFsm};
use crate::symbol::{PORTS, Port, Symbol, port_name};
use crate::topology::{Topology, XLinkEnd};
use icn_engine::{Invalid, ModelError};
use std::ops::Range;
use std::sync::Arc;

/// Link and switch parameters: the switches' keys of the `xswitch` kind
/// ([`crate::xswitch_net::XSwitchNetConfig`]), read by the `xswitch` model and the cluster's
/// `[fabric]` alike. The defaults are the THNPC-II-like set-up of the model's experiments.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetParams {
    pub link_delay: usize,
    pub fifo_size: usize,
    pub stop_threshold: usize,
    pub go_threshold: usize,
    pub frame_size: u32,
    pub check: Check,
    pub dma_delay: u64,
    pub watchdog: u64,
    /// The same bound in seconds of wall time ([`icn_engine::watchdog`]).
    pub watchdog_wall_s: u64,
}

impl Default for NetParams {
    fn default() -> Self {
        NetParams {
            link_delay: 1,
            fifo_size: 64,
            stop_threshold: 48,
            go_threshold: 16,
            frame_size: 64,
            check: Check::Crc16,
            dma_delay: 10,
            watchdog: 20_000,
            watchdog_wall_s: icn_engine::watchdog::DEFAULT_WALL_S,
        }
    }
}

impl NetParams {
    pub fn validate(&self) -> Result<(), Invalid> {
        check_thresholds(
            self.fifo_size,
            self.stop_threshold,
            self.go_threshold,
            self.link_delay,
        )?;
        Invalid::check(
            (1..=65_536).contains(&self.frame_size),
            "frame_size",
            "1 ..= 65536 payload bytes",
            self.frame_size,
        )?;
        Invalid::check(
            self.dma_delay <= 1_000_000,
            "dma_delay",
            "0 ..= 10^6 cycles",
            self.dma_delay,
        )?;
        let min = 4 * self.link_delay as u64 + 64;
        Invalid::check(
            (min..=1 << 40).contains(&self.watchdog),
            "watchdog",
            &format!("{min} ..= 2^40 cycles (4·link_delay + 64 at least)"),
            self.watchdog,
        )?;
        icn_engine::watchdog::check_wall_s(self.watchdog_wall_s)
    }
}

/// Receives frame events (the model turns them into latency samples).
pub trait Observer {
    fn started(&mut self, _now: u64, _src: usize, _f: &Started) {}
    fn delivered(&mut self, _now: u64, _dst: usize, _f: &Delivered) {}
}

impl Observer for () {}

/// Counters accumulated while `measuring` is on.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Counters {
    pub stops: u64,
    pub gos: u64,
    /// Output-port-cycles spent in a `Wait` state.
    pub wait_cycles: u64,
    /// Frame symbols sent per channel.
    pub busy: Vec<u64>,
    pub cycles: u64,
}

const NONE: u32 = u32::MAX;

pub struct XNet {
    /// Shared by the partitions of a [`ParXNet`](par::ParXNet) (its routes are large).
    pub topo: Arc<Topology>,
    p: NetParams,
    pub now: u64,
    nports: usize,
    line: Vec<Symbol>,
    /// Per delay slot, a bit set of the channels whose symbol in that slot is not IDLE
    /// (`lwords` words per slot): the receive phase visits only those, in channel order.
    lpend: Vec<u64>,
    lwords: usize,
    /// Receiver of each channel: a switch input `< nports`, NIA `nports + n`, or `NONE`.
    dest: Vec<u32>,
    fifo: Vec<Fifo>,
    fc: Vec<FlowControl>,
    bound: Vec<bool>,
    fsm: Vec<OutputFsm>,
    stopped: Vec<bool>,
    pub nias: Vec<Nia>,
    /// Frames started here minus frames delivered here: in a partition the two happen in
    /// different partitions, so only the sum over partitions is the network's count.
    in_flight: i64,
    last_move: u64,
    /// The watchdog's wall-time side.
    wall: icn_engine::watchdog::StallClock,
    /// Switch ports (`lo·5 .. hi·5`) and NIAs simulated here: all of them, or a partition's
    /// switches with their NIAs ([`XNet::partition`]). Every vector keeps the whole
    /// network's indexing, so a partition visits channels in the sequential order.
    own_ports: Range<usize>,
    own_nias: Vec<u32>,
    /// Partitions only (empty in a whole network): per switch output, the partition its
    /// link leads to (`NONE`: this one), and the symbols sent to other partitions this cycle.
    remote_to: Vec<u32>,
    sent: Vec<(u32, Symbol)>,
    pub measuring: bool,
    pub counters: Counters,
    /// When set to an output port index, its grants are logged as (cycle, input port).
    pub grant_log: Option<(usize, Vec<(u64, Port)>)>,
    /// Set when [`XNet::step`] failed because of the watchdog.
    pub deadlocked: bool,
}

impl XNet {
    pub fn new(topo: Topology, p: NetParams) -> Result<XNet, Invalid> {
        p.validate()?;
        Ok(Self::build(Arc::new(topo), p, 1, 0))
    }

    /// Switches `k·S/parts .. (k+1)·S/parts` of the topology's `S` with the NIAs attached to
    /// them, as partition `k` of `parts` for [`icn_engine::lockstep`]: a symbol (frame
    /// character or STOP/GO) sent on a link to another partition's switch becomes an
    /// [`XMsg`] and lands there `link_delay` cycles later, as on the delay line.
    pub fn partition(
        topo: Arc<Topology>,
        p: NetParams,
        parts: usize,
        k: usize,
    ) -> Result<XNet, Invalid> {
        p.validate()?;
        icn_engine::lockstep::Split::checked(topo.switches, parts, k, "switch")?;
        Ok(Self::build(topo, p, parts, k))
    }

    /// Without the parameter check: only for tests that show what the check prevents.
    #[cfg(test)]
    pub(crate) fn new_unchecked(topo: Topology, p: NetParams) -> XNet {
        Self::build(Arc::new(topo), p, 1, 0)
    }

    fn build(topo: Arc<Topology>, p: NetParams, parts: usize, k: usize) -> XNet {
        let nports = topo.switches * PORTS;
        let split = icn_engine::lockstep::Split {
            items: topo.switches,
            parts,
        };
        let (lo, hi) = (split.start(k), split.start(k + 1));
        let part_of = |sw: usize| split.part_of(sw);
        let nn = topo.nias();
        let mut dest = vec![NONE; nports + nn];
        for (o, link) in topo.links.iter().enumerate() {
            dest[o] = match *link {
                Some(XLinkEnd::Switch { sw, port }) => (sw * PORTS + usize::from(port)) as u32,
                Some(XLinkEnd::Nia(n)) => (nports + n) as u32,
                None => NONE,
            };
        }
        for (n, &(sw, port)) in topo.nia_at.iter().enumerate() {
            dest[nports + n] = (sw * PORTS + usize::from(port)) as u32;
        }
        // An NIA lives with its switch; the others' are placeholders without sequence tables.
        let own_nias: Vec<u32> = (0..nn)
            .filter(|&n| (lo..hi).contains(&topo.nia_at[n].0))
            .map(|n| n as u32)
            .collect();
        let mut nias: Vec<Nia> = (0..nn)
            .map(|n| Nia::new(n, 0, p.frame_size, p.check, p.dma_delay))
            .collect();
        for &n in &own_nias {
            nias[n as usize] = Nia::new(n as usize, nn, p.frame_size, p.check, p.dma_delay);
        }
        let remote_to = if parts > 1 {
            (0..nports)
                .map(|o| match dest[o] as usize {
                    to if to < nports && !(lo..hi).contains(&(to / PORTS)) => {
                        part_of(to / PORTS) as u32
                    }
                    _ => NONE,
                })
                .collect()
        } else {
            Vec::new()
        };
        XNet {
            own_ports: lo * PORTS..hi * PORTS,
            own_nias,
            remote_to,
            sent: Vec::new(),
            nports,
            line: vec![Symbol::IDLE; dest.len() * p.link_delay],
            lpend: vec![0; dest.len().div_ceil(64) * p.link_delay],
            lwords: dest.len().div_ceil(64),
            fifo: vec![Fifo::new(p.fifo_size); nports],
            fc: vec![FlowControl::new(p.stop_threshold, p.go_threshold); nports],
            bound: vec![false; nports],
            fsm: vec![OutputFsm::default(); nports],
            stopped: vec![false; nports],
            counters: Counters {
                busy: vec![0; dest.len()],
                ..Counters::default()
            },
            dest,
            nias,
            topo,
            p,
            now: 0,
            in_flight: 0,
            last_move: 0,
            wall: Default::default(),
            measuring: false,
            grant_log: None,
            deadlocked: false,
        }
    }

    /// Frames started by an NIA and not yet accepted by their destination.
    pub fn in_flight(&self) -> u64 {
        self.in_flight as u64
    }

    /// The last cycle a frame symbol moved here (for the watchdog of a partitioned network).
    pub(crate) fn last_move(&self) -> u64 {
        self.last_move
    }

    /// True when no NIA simulated here has a message to send or a frame under way.
    pub fn sources_idle(&self) -> bool {
        self.own_nias.iter().all(|&n| {
            let n = &self.nias[n as usize];
            n.backlog() == 0 && !n.mid_frame()
        })
    }

    /// True when an idle cycle changes only the clock, the polling pointers and the
    /// measured cycle count: no frame in flight, no symbol on a line or in a FIFO, every
    /// output polling with no flow-control character owed, every NIA with nothing to send.
    pub fn settled(&self) -> bool {
        self.in_flight == 0 && self.quiet()
    }

    /// [`XNet::settled`] but for the frame count, which a partition cannot judge alone (a
    /// frame starts in one partition and lands in another): its driver checks the sum.
    pub(crate) fn quiet(&self) -> bool {
        self.sent.is_empty()
            && self.lpend.iter().all(|&w| w == 0)
            && self.own_ports.clone().all(|o| {
                self.fifo[o].is_empty()
                    && !self.bound[o]
                    && !self.fc[o].pending()
                    && self.fsm[o].polled().is_some()
            })
            && self.sources_idle()
    }

    /// Advances a [settled](XNet::settled) network by `cycles` cycles, exactly as that many
    /// [`XNet::step`]s would: each wired output's `Poll X` moves on one input per cycle
    /// (nothing requests it), and nothing else changes but the clock and, while measuring,
    /// the cycle count. Long computes between a program's messages cost O(ports), not
    /// O(cycles).
    pub fn skip_settled(&mut self, cycles: u64) {
        debug_assert!(self.quiet(), "only a settled network skips");
        let turn = (cycles % PORTS as u64) as usize;
        for o in self.own_ports.clone() {
            if self.dest[o] != NONE
                && let OutState::Poll(p) = self.fsm[o].state
            {
                self.fsm[o].state = OutState::Poll(((usize::from(p) + turn) % PORTS) as Port);
            }
        }
        if self.measuring {
            self.counters.cycles += cycles;
        }
        self.now += cycles;
    }

    /// Channel index → (is switch-to-switch). For link-utilisation summaries.
    pub fn inter_switch_channels(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.nports).filter(|&c| (self.dest[c] as usize) < self.nports)
    }

    /// Largest fill any FIFO holds right now.
    pub fn max_fill(&self) -> usize {
        self.fifo.iter().map(Fifo::len).max().unwrap_or(0)
    }

    /// Delivers the symbol in `slot` of channel `c` to its receiver (a switch input or an NIA).
    #[inline]
    fn receive<O: Observer>(
        &mut self,
        c: usize,
        d: usize,
        slot: usize,
        now: u64,
        obs: &mut O,
    ) -> Result<(), ModelError> {
        let nports = self.nports;
        let s = self.line[c * d + slot];
        let to = self.dest[c];
        debug_assert!(
            s != Symbol::IDLE && to != NONE,
            "only sent symbols are marked"
        );
        let to = to as usize;
        if to < nports {
            if s == Symbol::STOP {
                self.stopped[to] = true;
            } else if s == Symbol::GO {
                self.stopped[to] = false;
            } else {
                if self.fifo[to].push(s).is_err() {
                    return Err(ModelError::Failed(format!(
                        "cycle {now}: FIFO overflow at input {} (capacity {}): flow control failed",
                        port_label(to),
                        self.p.fifo_size
                    )));
                }
                self.fc[to].observe(self.fifo[to].len());
            }
        } else {
            let n = to - nports;
            if let Some(f) = self.nias[n].receive(s).map_err(ModelError::Failed)? {
                self.in_flight -= 1;
                self.last_move = now;
                obs.delivered(now, n, &f);
            }
        }
        Ok(())
    }

    /// One clock of the whole network.
    pub fn step<O: Observer>(&mut self, obs: &mut O) -> Result<(), ModelError> {
        let d = self.p.link_delay;
        let now = self.now;
        let slot = (now % d as u64) as usize;
        let nports = self.nports;

        // 1. Receive.
        let lw = self.lwords;
        for wi in 0..lw {
            let mut pending = std::mem::take(&mut self.lpend[slot * lw + wi]);
            while pending != 0 {
                let c = wi * 64 + pending.trailing_zeros() as usize;
                pending &= pending - 1;
                self.receive(c, d, slot, now, obs)?;
            }
        }

        // 2a. Switch outputs.
        let measuring = self.measuring;
        for o in self.own_ports.clone() {
            if self.dest[o] == NONE {
                continue;
            }
            let base = o - o % PORTS;
            let me = (o % PORTS) as Port;
            let polled_requests = self.fsm[o].polled().is_some_and(|p| {
                let j = base + usize::from(p);
                !self.bound[j] && self.fifo[j].front().and_then(Symbol::route_port) == Some(me)
            });
            let head = match self.fsm[o].bound() {
                Some(p) => match self.fifo[base + usize::from(p)].front() {
                    None => Head::Empty,
                    Some(s) if s == Symbol::EOF => Head::Eof,
                    Some(_) => Head::Other,
                },
                None => Head::Empty,
            };
            let view = OutView {
                flow_control_pending: self.fc[o].pending(),
                polled_requests,
                stopped: self.stopped[o],
                head,
            };
            let sym = match self.fsm[o].step(view) {
                OutAction::FlowControl => {
                    let s = self.fc[o].take().expect("pending");
                    if measuring {
                        if s == Symbol::STOP {
                            self.counters.stops += 1;
                        } else {
                            self.counters.gos += 1;
                        }
                    }
                    s
                }
                OutAction::Idle => Symbol::IDLE,
                OutAction::Grant(p) => {
                    let j = base + usize::from(p);
                    self.fifo[j].pop();
                    self.bound[j] = true;
                    self.fc[j].observe(self.fifo[j].len());
                    if let Some((port, log)) = &mut self.grant_log
                        && *port == o
                    {
                        log.push((now, p));
                    }
                    Symbol::IDLE
                }
                OutAction::Forward(p) => {
                    let j = base + usize::from(p);
                    let s = self.fifo[j]
                        .pop()
                        .expect("FSM forwards only a non-empty FIFO");
                    self.fc[j].observe(self.fifo[j].len());
                    if s == Symbol::EOF {
                        self.bound[j] = false;
                    }
                    self.last_move = now;
                    if measuring {
                        self.counters.busy[o] += 1;
                    }
                    s
                }
            };
            if measuring && matches!(self.fsm[o].state, OutState::Wait(_)) {
                self.counters.wait_cycles += 1;
            }
            if sym != Symbol::IDLE {
                if self.remote_to.get(o).is_some_and(|&q| q != NONE) {
                    // To another partition, which puts it on its delay line (`par`).
                    self.sent.push((o as u32, sym));
                } else {
                    self.line[o * d + slot] = sym;
                    self.lpend[slot * self.lwords + o / 64] |= 1 << (o % 64);
                }
            }
        }

        // 2b. NIAs (each sends to its own switch: never to another partition).
        // A whole network visits NIAs by index: no table to read in the hot loop.
        let (whole, count) = match self.own_nias.len() {
            _ if self.remote_to.is_empty() => (true, self.nias.len()),
            k => (false, k),
        };
        for k in 0..count {
            let n = if whole { k } else { self.own_nias[k] as usize };
            let nia = &mut self.nias[n];
            if let Some(f) = nia.start_frame(now, &self.topo) {
                self.in_flight += 1;
                obs.started(now, n, &f);
            }
            let s = nia.transmit();
            if s != Symbol::IDLE {
                self.last_move = now;
                if measuring {
                    self.counters.busy[nports + n] += 1;
                }
            }
            if s != Symbol::IDLE {
                let c = nports + n;
                self.line[c * d + slot] = s;
                self.lpend[slot * self.lwords + c / 64] |= 1 << (c % 64);
            }
        }
        if measuring {
            self.counters.cycles += 1;
        }

        // A partition's watchdog is its driver's, over the whole network.
        if self.remote_to.is_empty() && self.in_flight > 0 {
            let still = now - self.last_move;
            let wall_s = self.p.watchdog_wall_s;
            if still >= self.p.watchdog {
                self.deadlocked = true;
                return Err(ModelError::Failed(self.diagnose()));
            }
            if self.wall.expired(self.last_move, still, wall_s) {
                self.deadlocked = true;
                let how = icn_engine::watchdog::wall_message(wall_s, still);
                return Err(ModelError::Failed(self.diagnose_after(&how)));
            }
        }
        self.now += 1;
        Ok(())
    }

    /// Who waits on whom, as a wait-for graph over switch inputs; reports a cycle if any.
    pub fn diagnose(&self) -> String {
        let still = self.now - self.last_move;
        self.diagnose_after(&format!("no frame symbol moved for {still} cycles"))
    }

    /// [`XNet::diagnose`] with `how` saying how long nothing moved.
    fn diagnose_after(&self, how: &str) -> String {
        WaitFor {
            bound: &self.bound,
            fsm: &self.fsm,
            stopped: &self.stopped,
            fifo: &self.fifo,
            dest: &self.dest,
        }
        .diagnose(how, self.now, self.in_flight as u64)
    }
}

/// The switch state the wait-for diagnosis reads, per port of the whole network (a
/// partitioned network assembles it from its partitions).
pub(crate) struct WaitFor<'a> {
    pub bound: &'a [bool],
    pub fsm: &'a [OutputFsm],
    pub stopped: &'a [bool],
    pub fifo: &'a [Fifo],
    pub dest: &'a [u32],
}

impl WaitFor<'_> {
    /// Edges: an unbound input whose head asks for output X waits on the input bound to X;
    /// an input bound to output X that is stopped waits on the downstream input of X.
    pub(crate) fn diagnose(&self, how: &str, now: u64, in_flight: u64) -> String {
        let n = self.bound.len();
        let mut next = vec![usize::MAX; n];
        let mut why = vec![String::new(); n];
        for i in 0..n {
            let base = i - i % PORTS;
            if self.bound[i] {
                let Some(o) = (base..base + PORTS)
                    .find(|&o| self.fsm[o].bound() == Some((i % PORTS) as Port))
                else {
                    continue;
                };
                let to = self.dest[o] as usize;
                if self.stopped[o] && to < n {
                    next[i] = to;
                    why[i] = format!(
                        "holds output {} which {} has stopped",
                        port_label(o),
                        port_label(to)
                    );
                }
            } else if let Some(x) = self.fifo[i].front().and_then(Symbol::route_port) {
                let o = base + usize::from(x);
                if let Some(p) = self.fsm[o].bound() {
                    next[i] = base + usize::from(p);
                    why[i] = format!(
                        "wants output {} held by input {}",
                        port_label(o),
                        port_label(next[i])
                    );
                }
            }
        }
        let mut text =
            format!("deadlock: {how} (cycle {now}) while {in_flight} frames are in flight.");
        let mut colour = vec![0u32; n];
        for start in 0..n {
            let mut i = start;
            while i != usize::MAX && colour[i] == 0 {
                colour[i] = start as u32 + 1;
                i = next[i];
            }
            if i != usize::MAX && colour[i] == start as u32 + 1 {
                text.push_str(" Wait-for cycle:");
                let first = i;
                loop {
                    text.push_str(&format!(" input {} {};", port_label(i), why[i]));
                    i = next[i];
                    if i == first {
                        break;
                    }
                }
                text.push_str(" (dimension-order routing on a torus or ring without virtual channels is not deadlock-free)");
                return text;
            }
        }
        text.push_str(" No wait-for cycle found; blocked inputs:");
        for i in (0..n).filter(|&i| next[i] != usize::MAX).take(12) {
            text.push_str(&format!(" {} {};", port_label(i), why[i]));
        }
        text
    }
}

/// "s3.B" for port index 17.
pub fn port_label(i: usize) -> String {
    format!("s{}.{}", i / PORTS, port_name((i % PORTS) as Port))
}

pub mod network;
#[cfg(test)]
mod tests;

pub mod par;

#[cfg(test)]
mod par_tests;
