//! Switch agents: the nodes of a ring that belong to an SCI switch (`model = "sci-switched"`).
//!
//! On its ring an agent is an ordinary node: its stripper answers sends addressed to it with
//! the receiver's A/B decision (a full input queue answers BUSY like any target), and its
//! transmitter sends like any source. Two things differ, and only for agents:
//!
//! * **Input queue**: an accepted send is not consumed but *forwarded*. The agent's input
//!   queue (depth [`AgentParams::depth`]) holds it; `service_time` cycles after it reached
//!   the head it is *serviced* (routed through the switch) and offered to the switch, which
//!   moves it to the send queue of the switch's agent on the next ring when that queue has
//!   room ([`Sim::release`]). Until then it keeps its input-queue slot: a switch that cannot
//!   forward fills up and answers BUSY, which is SCI's only back-pressure.
//! * **Sends**: the agent's send queue holds forwarded sends (capacity `depth`); nothing is
//!   generated there.
//!
//! With agents the ring runs *externally driven* ([`Sim::new_switched`]): sends enter by
//! [`Sim::inject_created`] / [`Sim::inject_forward`] rather than the ring's own traffic, and
//! the ring reports what the switched system needs in its outbox: acceptances at hosts (the
//! send's final target) and DONE echoes of every hop. A plain ring (`model = "sci"`) has no
//! agents, takes none of these branches and reports nothing.

use super::{Port, Queued, Sim};
use crate::config::SciConfig;
use crate::protocol::packet::ECHO_SYMBOLS;
use crate::protocol::{ActiveSend, Phase, Policy, Receiver, ServeState, Sst, StateChange, allowed};
use crate::ring::events::Event;
use crate::ring::traffic::Arrival;
use crate::ring::wire::{Kind, Wire};
use crate::switched::RetryOrder;
use icn_engine::ModelError;
use std::collections::VecDeque;

/// `Queued::fin` of a send on a plain ring (no final target beyond the ring).
pub(super) const NO_FIN: u16 = u16::MAX;

/// A switch's per-ring parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AgentParams {
    /// Input-queue depth and send-queue capacity of every agent, in packets.
    pub depth: usize,
    /// Cycles to route one packet through the switch (input-queue service time).
    pub service_time: u64,
    /// Queue allocation of the agents' input queues (the hosts' is the ring config's).
    pub policy: Policy,
    /// Own sends an agent may start per SAT visit (hosts: the ring config's `sat_quota`).
    pub sat_quota: u32,
    /// The transmit order of every node of a ring with an agent ([`Agents::order`]).
    pub order: RetryOrder,
}

/// A send held in an agent's input queue. Its creation time stays with the switched system:
/// on each hop a send counts as created when it enters that hop's send queue (see
/// [`Sim::inject_forward`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fwd {
    pub seq: u64,
    pub size_class: u8,
}

/// What an externally driven ring reports to the switched system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outbox {
    /// Host `node` accepted send `seq` (its final target): `symbols` on the wire, `bytes`
    /// of data.
    Accepted {
        node: u8,
        seq: u64,
        symbols: u8,
        bytes: u64,
    },
    /// The sender of one hop of `seq` got DONE after `transmissions` tries; `last`: the hop
    /// ended at a host (the send's final hop), not at an agent.
    HopDone {
        node: u8,
        seq: u64,
        transmissions: u32,
        last: bool,
    },
}

/// The agents of one ring; empty (and never consulted beyond one bounds check) on a plain ring.
#[derive(Clone, Debug, Default)]
pub(super) struct Agents {
    external: bool,
    /// The transmit order asked for a ring with a switch agent; `None` (a plain ring, which
    /// uses `Agents::default()`, or a ring without agents): the `sci` ring's `Oldest`.
    order: Option<RetryOrder>,
    is_agent: Vec<bool>,
    params: Option<AgentParams>,
    fwd: Vec<VecDeque<Fwd>>,
    /// Packets at the head of `fwd` that are serviced and wait for the switch.
    serviced: Vec<u32>,
    outbox: Vec<Outbox>,
    /// Remote serve status (machine-wide intelligent A/B aging; empty when off): per node,
    /// the last state heard of every global host through relayed NOTIFYs.
    remote: Vec<Vec<ServeState>>,
    /// Per node, how many relayed NOTIFYs it has parsed (lets a switch skip unchanged tables).
    remote_version: Vec<u64>,
    /// Per agent, relayed NOTIFYs waiting to be sent: (host, change), newest per host.
    pending: Vec<Vec<(u16, StateChange)>>,
    /// Relayed NOTIFYs sent.
    relayed: u64,
}

impl Agents {
    #[inline]
    pub(super) fn is_agent(&self, i: usize) -> bool {
        self.is_agent.get(i).copied().unwrap_or(false)
    }

    #[inline]
    pub(super) fn external(&self) -> bool {
        self.external
    }

    /// This ring's transmit order (`retry_order`, `RetryOrder` documents the three): as asked
    /// on the rings of a multi-ring system; a plain ring and the degenerate single ring keep
    /// the `sci` model's oldest first, bit for bit.
    ///
    /// Why not oldest first across switches (docs/sci.md): a node re-sends its oldest busied
    /// send every time it is ready; on a short ring the BUSY echo returns before the next
    /// transmit opportunity, so a younger busied send — the reservation another target in
    /// SERVE_A/B waits for — is never re-sent. One ring drains that (its targets consume);
    /// behind one-packet switch queues with intelligent hold-back the wait closes a cycle
    /// (test `intelligent_aging_with_one_packet_switch_queues`). Busied first (the default)
    /// re-sends the least recently transmitted busied send instead.
    #[inline]
    pub(super) fn order(&self) -> RetryOrder {
        self.order.unwrap_or(RetryOrder::Oldest)
    }

    pub(super) fn depth(&self) -> usize {
        self.params.map_or(0, |p| p.depth)
    }

    pub(super) fn sat_quota(&self) -> u32 {
        self.params.map_or(1, |p| p.sat_quota)
    }

    /// No send waiting in any agent's input queue.
    pub(super) fn idle(&self) -> bool {
        self.fwd.iter().all(VecDeque::is_empty) && self.pending.iter().all(Vec::is_empty)
    }

    pub(super) fn queued(&self, i: usize) -> usize {
        self.fwd.get(i).map_or(0, VecDeque::len)
    }
}

impl Sim {
    /// One ring of a switched system: `agents[i]` marks the switch agents; the ring's own
    /// traffic generator is not used (sends are injected). `cfg` gives the ring size and every
    /// protocol parameter.
    pub fn new_switched(
        cfg: &SciConfig,
        seed: u64,
        intelligent: bool,
        agents: &[bool],
        params: AgentParams,
    ) -> Result<Sim, ModelError> {
        let mut sim = Sim::new(cfg, seed, intelligent)?;
        if agents.len() != sim.n {
            return Err(ModelError::Failed(format!(
                "{} agent flags for a ring of {} nodes",
                agents.len(),
                sim.n
            )));
        }
        for (i, _) in agents.iter().enumerate().filter(|(_, a)| **a) {
            sim.recv[i] = Receiver::new(params.policy, cfg.generation_end());
            sim.ports[i].quota = params.sat_quota;
        }
        sim.agents = Agents {
            external: true,
            order: agents.iter().any(|&a| a).then_some(params.order),
            is_agent: agents.to_vec(),
            params: Some(params),
            fwd: vec![VecDeque::new(); sim.n],
            serviced: vec![0; sim.n],
            outbox: Vec::new(),
            remote: Vec::new(),
            remote_version: vec![0; sim.n],
            pending: vec![Vec::new(); sim.n],
            relayed: 0,
        };
        Ok(sim)
    }

    /// Turns on remote serve-status tables for `hosts` global hosts (all SERVE_NA).
    pub fn enable_remote_status(&mut self, hosts: usize) {
        self.agents.remote = vec![vec![ServeState::Na; hosts]; self.n];
    }

    /// The SST of node `i` (states of the nodes of this ring).
    pub fn sst(&self, i: usize) -> Sst {
        self.sst[i]
    }

    /// Node `i`'s own receiver state.
    pub fn serve_state(&self, i: usize) -> ServeState {
        self.recv[i].state()
    }

    /// What node `i` last heard of global host `host` through relayed NOTIFYs.
    pub fn remote_state(&self, i: usize, host: usize) -> ServeState {
        self.agents
            .remote
            .get(i)
            .and_then(|t| t.get(host))
            .copied()
            .unwrap_or(ServeState::Na)
    }

    /// Relayed NOTIFYs node `i` has parsed so far.
    pub fn remote_version(&self, i: usize) -> u64 {
        self.agents.remote_version.get(i).copied().unwrap_or(0)
    }

    /// Relayed NOTIFYs this ring's agents have sent.
    pub fn relayed(&self) -> u64 {
        self.agents.relayed
    }

    /// Agent `i` is to send a relayed NOTIFY: `host` is now in `change.to()`. A change for the
    /// same host that has not left yet is replaced (the newest state wins, as in the
    /// NOTIFYBUFFER).
    pub fn post_remote(&mut self, i: usize, host: u16, change: StateChange) {
        let q = &mut self.agents.pending[i];
        match q.iter_mut().find(|(h, _)| *h == host) {
            Some(e) => e.1 = change,
            None => q.push((host, change)),
        }
    }

    /// A relayed NOTIFY passed node `i` (its own relays are removed at their origin before).
    pub(super) fn remote_notify(&mut self, i: usize, p: &mut Port, w: Wire) {
        let host = usize::from(w.buf() - 1);
        let change = StateChange::from_code(u16::from(w.status()));
        if let Some(slot) = self.agents.remote.get_mut(i).and_then(|t| t.get_mut(host)) {
            *slot = change.to();
            self.agents.remote_version[i] += 1;
            p.tx_dirty = true;
            let cycle = self.now;
            self.log(Event::RemoteNotifySeen {
                cycle,
                node: i as u8,
                host: host as u16,
                change,
            });
        }
    }

    /// The oldest relayed NOTIFY agent `i` has pending, as the header to send.
    pub(super) fn take_remote_notify(&mut self, i: usize, measuring: bool) -> Option<Wire> {
        let q = self.agents.pending.get_mut(i)?;
        if q.is_empty() {
            return None;
        }
        let (host, change) = q.remove(0);
        self.agents.relayed += 1;
        if measuring {
            self.measure.notify_symbols += (ECHO_SYMBOLS * self.n) as u64;
        }
        Some(Wire::header(
            Kind::Notify,
            ECHO_SYMBOLS as u8,
            change.code() as u8,
            i as u8,
            i as u8,
            host + 1,
        ))
    }

    /// Machine-wide hold-back: may node `i` start a new send whose final target is `fin`?
    #[inline]
    pub(super) fn remote_allows(&self, i: usize, fin: u16) -> bool {
        fin == NO_FIN
            || self.agents.remote.is_empty()
            || allowed(self.remote_state(i, usize::from(fin)), Phase::NoTry)
    }

    /// Whether node `i` is a switch agent.
    pub fn is_agent(&self, i: usize) -> bool {
        self.agents.is_agent(i)
    }

    /// A send created now at host `src` for local node `dst` (the final target or the agent
    /// towards it): counted and queued as `seq` like the ring's own traffic, or dropped at a
    /// full send queue (returns false).
    pub fn inject_created(&mut self, src: u8, dst: u8, size_class: u8, seq: u64, fin: u16) -> bool {
        let measuring = self.now >= self.measure_start;
        let a = Arrival {
            src,
            dst,
            size_class,
        };
        let queued = self.create(a, seq, measuring);
        if queued {
            let s = usize::from(src);
            if let Some(q) = self.sendq[s].back_mut() {
                q.fin = fin;
            }
            self.ports[s].tx_dirty = true;
        }
        queued
    }

    /// A send forwarded by the switch into agent `src`'s send queue; false (nothing changes)
    /// when that queue is full.
    ///
    /// On this hop the send counts as created *now*, not at its source: the transmitter picks
    /// the oldest send first, and with source creation times an agent would pick sends in an
    /// order unrelated to the order they reached it. Then a send first tried late (busied with
    /// tag A while its target serves B) can be older than one holding the target's B
    /// reservation, be re-picked every time its echo returns, and starve the reservation
    /// holder at the same agent: the target stays in SERVE_B for ever (seen as a drain that
    /// never ends on a ring of rings). Hop-local creation keeps each agent's sends in
    /// arrival order, as a host's are; sends forwarded in the same cycle are ordered by first
    /// transmission (`ActiveSend::started`, in the transmitter's pick).
    pub fn inject_forward(&mut self, src: u8, dst: u8, f: Fwd, fin: u16) -> bool {
        let s = usize::from(src);
        if self.sendq[s].len() >= self.agents.depth() {
            return false;
        }
        self.sendq[s].push_back(Queued {
            dst,
            size_class: f.size_class,
            created: self.now,
            seq: f.seq,
            fin,
        });
        self.outstanding += 1;
        self.injected += 1;
        self.ports[s].tx_dirty = true;
        let cycle = self.now;
        self.log(Event::Created {
            cycle,
            seq: f.seq,
            src,
            dst,
        });
        true
    }

    /// The serviced send at the head of agent `i`'s input queue, if any.
    pub fn forward_ready(&self, i: usize) -> Option<Fwd> {
        if self.agents.serviced.get(i).copied().unwrap_or(0) > 0 {
            self.agents.fwd[i].front().copied()
        } else {
            None
        }
    }

    /// The switch took the head of agent `i`'s input queue: its slot is free again.
    pub fn release(&mut self, i: usize) {
        if self.forward_ready(i).is_none() {
            self.fault = Some(format!("agent {i}: released with nothing serviced"));
            return;
        }
        self.agents.fwd[i].pop_front();
        self.agents.serviced[i] -= 1;
        let p = &mut self.ports[i];
        p.inq -= 1;
        if p.svc_done == u64::MAX && p.inq > self.agents.serviced[i] {
            p.svc_done = self.now + self.agents.params.map_or(0, |a| a.service_time);
        }
    }

    /// Nodes on this ring.
    pub fn nodes(&self) -> usize {
        self.n
    }

    /// Sends waiting in agent `i`'s input queue.
    pub fn agent_queue(&self, i: usize) -> usize {
        self.agents.queued(i)
    }

    /// Moves everything the ring reported since the last call to `out`.
    pub fn drain_outbox(&mut self, out: &mut Vec<Outbox>) {
        out.append(&mut self.agents.outbox);
    }

    /// The consumer of agent `i` finished servicing a packet: it waits for the switch; the next
    /// one, if any, starts.
    pub(super) fn agent_serviced(&mut self, i: usize, p: &mut Port) {
        self.agents.serviced[i] += 1;
        p.svc_done = if p.inq > self.agents.serviced[i] {
            self.now + self.agents.params.map_or(0, |a| a.service_time)
        } else {
            u64::MAX
        };
    }

    /// Agent `i` accepted the send `w` into its input queue.
    pub(super) fn agent_accept(&mut self, i: usize, p: &mut Port, w: Wire) {
        let s = *self.active[usize::from(w.src())].get(usize::from(w.buf()));
        self.agents.fwd[i].push_back(Fwd {
            seq: s.seq,
            size_class: s.size_class,
        });
        p.inq += 1;
        if p.inq - self.agents.serviced[i] == 1 {
            p.svc_done = self.now + self.agents.params.map_or(0, |a| a.service_time);
        }
    }

    /// Host `i` accepted the send `w`: its final target.
    pub(super) fn host_accept(&mut self, i: usize, w: Wire) {
        let seq = self.active[usize::from(w.src())]
            .get(usize::from(w.buf()))
            .seq;
        self.agents.outbox.push(Outbox::Accepted {
            node: i as u8,
            seq,
            symbols: w.packet_len(),
            bytes: 2 * u64::from(w.packet_len() - self.base_len),
        });
    }

    /// Node `i` got DONE for its send `s`.
    pub(super) fn hop_done(&mut self, i: usize, s: &ActiveSend) {
        let last = !self.agents.is_agent(usize::from(s.target));
        self.agents.outbox.push(Outbox::HopDone {
            node: i as u8,
            seq: s.seq,
            transmissions: s.transmissions,
            last,
        });
    }
}
