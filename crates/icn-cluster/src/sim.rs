//! The cluster simulator: ranks run their programs, endpoints turn messages into packets,
//! a fabric moves them. Event-driven in picoseconds; the fabric is stepped whenever its next
//! event is not later than the next program or endpoint event, so a cycle-driven fabric
//! runs cycle by cycle while packets are in flight and is skipped over while idle.
//!
//! A message's life, and the layer each part is counted in:
//!
//! ```text
//! post ─host stages─▶ host done ─NIC send stages─▶ first packet injected
//!      ─fabric─▶ last packet delivered ─NIC receive stages, host poll─▶ complete
//! ```
//!
//! host = host stages on both sides; fabric = first injection → last delivery;
//! NIC = the rest of post → complete. The fabric time splits into *wire* (the message's
//! packets alone on the empty fabric from the same injection times:
//! [`icn_fabric::zero_load::Wire`]) and *waiting in the fabric* (the rest: other traffic). Waiting for a message that has not arrived is counted
//! per rank as `recv_wait`, not in any message's layers.
//!
//! Endpoint `r` hosts rank `r`. The run ends when every rank has finished its program; if
//! nothing can happen any more while some rank still waits, the run stops with a diagnosis
//! naming who waits for whom.

use crate::nic::{Cut, Endpoint};
use crate::program::{Op, Program};
use crate::transmit::{Head, Transmit};
use icn_engine::Progress;
use icn_engine::model::Ticker;
use icn_fabric::zero_load::Wire;
use icn_fabric::{Delivery, Fabric, PS_PER_NS, Packet, Ps, time};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// The rank may run its next operation.
    RankReady(usize),
    /// The packet at node `.0`'s last send stage has passed it: into the fabric, if it
    /// takes it now ([`Transmit`]).
    TxReady(usize),
    /// Message `msg` is complete in the receiver's memory.
    Complete(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RankState {
    Ready,
    /// Blocked in a receive since `since`.
    Recv {
        since: Ps,
    },
    /// Blocked in a synchronous send of `msg`.
    Ssend {
        msg: usize,
    },
    Done,
}

#[derive(Clone, Debug)]
struct Message {
    src: usize,
    dst: usize,
    tag: u32,
    bytes: u64,
    cut: Cut,
    posted: Ps,
    host_done: Ps,
    first_inject: Option<Ps>,
    last_delivery: Ps,
    wire: Wire,
    delivered_pieces: usize,
    rx_host: Ps,
    /// Every packet has passed the receive stages.
    received: bool,
    complete: Option<Ps>,
    consumed: bool,
}

/// What a cluster run measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// When each rank finished its program.
    pub finish: Vec<Ps>,
    pub messages: u64,
    pub bytes: u64,
    pub packets: u64,
    /// Summed over messages: host, NIC and fabric time on each message's path.
    pub host_ps: u128,
    pub nic_ps: u128,
    pub fabric_ps: u128,
    /// Summed over messages: the fabric time split into wire and waiting in the fabric.
    pub wire_ps: u128,
    pub fabric_wait_ps: u128,
    /// Summed over ranks: time blocked in receives and synchronous sends.
    pub wait_ps: u128,
    /// Mean end-to-end message time (post → complete).
    pub message_ps: u128,
}

/// Progress units of one run ([`icn_engine::Model::work`] of the cluster): its operations
/// and packets are counted against all it will have, whatever their number.
pub const PROGRESS_UNITS: u64 = 10_000;

/// Why a cluster run could not finish.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    #[error("the workload can never finish: {0}")]
    Stuck(String),
    #[error("rank {rank} op {op}: {why}")]
    Op { rank: usize, op: usize, why: String },
    #[error("fabric: {0}")]
    Fabric(String),
    #[error(
        "simulated time ran past the picosecond clock's 213 days (the communication of the \
         program takes longer than its time can count)"
    )]
    TimeOverflow,
}

/// One run of the cluster simulator: a program's ranks, their endpoints and a fabric, from
/// time zero until every rank has finished (the `cluster` model itself is
/// [`crate::model::Cluster`]).
pub struct ClusterSim<'a, F: Fabric + ?Sized> {
    fabric: &'a mut F,
    endpoint: &'a Endpoint,
    program: &'a Program,
    now: Ps,
    heap: BinaryHeap<Reverse<(Ps, u64, Event)>>,
    seq: u64,
    pc: Vec<usize>,
    state: Vec<RankState>,
    msgs: Vec<Message>,
    /// Complete, unconsumed messages by (src, dst, tag), in completion order.
    arrived: HashMap<(usize, usize, u32), VecDeque<usize>>,
    /// Every node's send side: messages waiting for the stages and the fabric.
    transmit: Transmit,
    /// Nodes whose packet the fabric refused, ascending: retried after each fabric step.
    blocked: Vec<usize>,
    /// Per node and receive stage: when the stage is next free.
    rx_free: Vec<Ps>,
    /// Per (src, dst): the last message completed, to check the non-overtaking rule.
    last_complete: HashMap<(usize, usize), usize>,
    /// Per (src, dst): messages posted and not yet complete, in post order. A fabric may
    /// deliver one pair's packets out of order (several VCs, adaptive routes, retries); a
    /// message completes only after every earlier message of its pair (MPI's
    /// non-overtaking rule), as a messaging layer resequences.
    in_order: HashMap<(usize, usize), VecDeque<usize>>,
    out: Outcome,
}

impl<'a, F: Fabric + ?Sized> ClusterSim<'a, F> {
    pub fn new(fabric: &'a mut F, endpoint: &'a Endpoint, program: &'a Program) -> Self {
        let n = program.len();
        ClusterSim {
            fabric,
            endpoint,
            program,
            now: 0,
            heap: BinaryHeap::new(),
            seq: 0,
            pc: vec![0; n],
            state: vec![RankState::Ready; n],
            msgs: Vec::new(),
            arrived: HashMap::new(),
            transmit: Transmit::new(&endpoint.tx, n),
            blocked: Vec::new(),
            rx_free: vec![0; n * endpoint.rx.len()],
            last_complete: HashMap::new(),
            in_order: HashMap::new(),
            out: Outcome {
                finish: vec![0; n],
                ..Outcome::default()
            },
        }
    }

    fn schedule(&mut self, t: Ps, e: Event) {
        self.heap.push(Reverse((t, self.seq, e)));
        self.seq += 1;
    }

    /// Node `node`'s head packet, when it has passed the stages, at the sequence number
    /// its message reserved for it.
    fn schedule_head(&mut self, node: usize, h: Head) {
        self.heap.push(Reverse((
            h.ready.max(self.now),
            h.seq,
            Event::TxReady(node),
        )));
    }

    /// Runs the program to the end.
    pub fn run(mut self, progress: &dyn Progress) -> Result<Outcome, RunError> {
        self.fabric.set_measuring(true);
        for r in 0..self.program.len() {
            self.schedule(0, Event::RankReady(r));
        }
        let mut deliveries = Vec::new();
        // Progress: operations run and packets delivered against all there will be.
        let max = u64::from(self.fabric.max_packet_bytes());
        let packets: u64 = self
            .program
            .ranks
            .iter()
            .flatten()
            .map(|op| match *op {
                Op::Send { bytes, .. } | Op::Ssend { bytes, .. } => {
                    self.endpoint.cut(bytes, max).count()
                }
                _ => 0,
            })
            .sum();
        let mut ticker = Ticker::new(
            progress,
            self.program.ops() as u64 + packets,
            PROGRESS_UNITS,
        );
        loop {
            let te = self.heap.peek().map(|Reverse((t, _, _))| *t);
            let tf = self.fabric.next_event();
            // Times are added saturating here and in the fabrics: reaching the end of the
            // clock is the overflow (inputs are checked to leave half of it to messages).
            if te == Some(time::END) || tf == Some(time::END) {
                return Err(RunError::TimeOverflow);
            }
            match (te, tf) {
                (None, None) => break,
                (te, Some(tf)) if te.is_none_or(|te| tf < te) => {
                    self.fabric
                        .advance(tf + 1, &mut deliveries)
                        .map_err(|e| RunError::Fabric(e.to_string()))?;
                    ticker.add(deliveries.len() as u64);
                    for d in deliveries.drain(..) {
                        self.delivered(d);
                    }
                    self.retry_blocked()?;
                }
                (Some(te), _) => {
                    if self.fabric.now() < te {
                        self.fabric
                            .skip_idle(te)
                            .map_err(|e| RunError::Fabric(e.to_string()))?;
                    }
                    let Reverse((t, _, e)) = self.heap.pop().expect("peeked");
                    self.now = t;
                    match e {
                        Event::RankReady(r) => {
                            let before = self.pc[r];
                            self.run_rank(r)?;
                            ticker.add((self.pc[r] - before) as u64);
                        }
                        Event::TxReady(node) => self.send_head(node, self.now)?,
                        Event::Complete(m) => self.complete(m)?,
                    }
                }
                (None, Some(_)) => unreachable!("handled by the fabric arm"),
            }
        }
        ticker.finish();
        if let Some(stuck) = self.diagnose() {
            return Err(RunError::Stuck(stuck));
        }
        Ok(self.out)
    }

    /// Runs rank `r`'s operations from now until one blocks or takes time.
    fn run_rank(&mut self, r: usize) -> Result<(), RunError> {
        if matches!(
            self.state[r],
            RankState::Done | RankState::Ssend { .. } | RankState::Recv { .. }
        ) {
            return Ok(());
        }
        let ops = &self.program.ranks[r];
        loop {
            let Some(&op) = ops.get(self.pc[r]) else {
                self.state[r] = RankState::Done;
                self.out.finish[r] = self.now;
                return Ok(());
            };
            match op {
                Op::Compute { ns } => {
                    self.pc[r] += 1;
                    self.schedule(
                        self.now.saturating_add(ns.saturating_mul(PS_PER_NS)),
                        Event::RankReady(r),
                    );
                    return Ok(());
                }
                Op::Send { peer, bytes, tag } | Op::Ssend { peer, bytes, tag } => {
                    let m = self.post(r, peer, bytes, tag);
                    self.pc[r] += 1;
                    if matches!(op, Op::Ssend { .. }) {
                        self.state[r] = RankState::Ssend { msg: m };
                        return Ok(());
                    }
                    let resume = self.msgs[m].host_done;
                    if resume > self.now {
                        self.schedule(resume, Event::RankReady(r));
                        return Ok(());
                    }
                }
                Op::Recv { peer, bytes, tag } => {
                    let Some(m) = self
                        .arrived
                        .get_mut(&(peer, r, tag))
                        .and_then(VecDeque::pop_front)
                    else {
                        self.state[r] = RankState::Recv { since: self.now };
                        return Ok(());
                    };
                    if self.msgs[m].bytes > bytes {
                        return Err(RunError::Op {
                            rank: r,
                            op: self.pc[r],
                            why: format!(
                                "{op}: the message has {} B (truncated)",
                                self.msgs[m].bytes
                            ),
                        });
                    }
                    self.consume(m);
                    self.pc[r] += 1;
                }
            }
        }
    }

    /// Posts a message: its first packet's host stages are computed now (the rank may go
    /// on when they are done); its packets pass the NIC stages as the fabric takes them
    /// ([`Transmit`]).
    fn post(&mut self, src: usize, dst: usize, bytes: u64, tag: u32) -> usize {
        let cut = self
            .endpoint
            .cut(bytes, u64::from(self.fabric.max_packet_bytes()));
        let m = self.msgs.len();
        // One event sequence number per packet, reserved now: packets ready at equal times
        // go in the order they had when all were scheduled at the post.
        let seq_base = self.seq;
        self.seq += cut.count();
        let (host_done, head) = self.transmit.post(src, m, cut, self.now, seq_base);
        self.out.messages += 1;
        self.out.bytes += bytes;
        self.out.packets += cut.count();
        self.msgs.push(Message {
            src,
            dst,
            tag,
            bytes,
            cut,
            posted: self.now,
            host_done,
            first_inject: None,
            last_delivery: 0,
            wire: Wire::default(),
            delivered_pieces: 0,
            rx_host: 0,
            received: false,
            complete: None,
            consumed: false,
        });
        self.in_order.entry((src, dst)).or_default().push_back(m);
        if let Some(h) = head {
            self.schedule_head(src, h);
        }
        m
    }

    /// Node `node`'s head packet goes into the fabric at `at` if its input queue has room;
    /// otherwise the node holds it and is retried after the next fabric step.
    fn send_head(&mut self, node: usize, at: Ps) -> Result<(), RunError> {
        let h = self
            .transmit
            .head(node)
            .expect("a packet waits at the node");
        let m = h.id;
        let p = Packet {
            src: node,
            dst: self.msgs[m].dst,
            bytes: (h.piece.bytes + self.endpoint.header_bytes) as u32,
            tag: (m as u64) << 32 | h.index,
        };
        let alone = self
            .fabric
            .zero_load(p.src, p.dst, p.bytes)
            .map_err(|e| RunError::Fabric(e.to_string()))?;
        if self.fabric.try_inject(p).is_err() {
            if let Err(k) = self.blocked.binary_search(&node) {
                self.blocked.insert(k, node);
            }
            return Ok(());
        }
        let msg = &mut self.msgs[m];
        msg.first_inject.get_or_insert(at);
        // A clocked fabric takes the packet at its next cycle: that alignment is the
        // fabric's own, alone or not.
        msg.wire.add(self.fabric.now().max(at), alone);
        if let Some(next) = self.transmit.taken(node, at) {
            self.schedule_head(node, next);
        }
        Ok(())
    }

    /// After a fabric step: every refused node whose input queue has room now sends.
    fn retry_blocked(&mut self) -> Result<(), RunError> {
        if self.blocked.is_empty() {
            return Ok(());
        }
        let at = self.fabric.now().max(self.now);
        for node in std::mem::take(&mut self.blocked) {
            if self.fabric.can_inject(node) {
                self.send_head(node, at)?;
            } else {
                self.blocked.push(node);
            }
        }
        Ok(())
    }

    /// A packet reached its destination NIC: the receive stages, in arrival order.
    fn delivered(&mut self, d: Delivery) {
        let m = (d.packet.tag >> 32) as usize;
        let k = (d.packet.tag & 0xffff_ffff) as usize;
        let dst = self.msgs[m].dst;
        let piece = self.msgs[m].cut.piece(k as u64);
        let (ready, host) =
            self.endpoint
                .receive_piece(&piece, dst, d.delivered, &mut self.rx_free);
        let msg = &mut self.msgs[m];
        msg.delivered_pieces += 1;
        msg.last_delivery = msg.last_delivery.max(d.delivered);
        msg.rx_host += host;
        if msg.delivered_pieces as u64 == msg.cut.count() {
            self.schedule(ready, Event::Complete(m));
        }
    }

    /// Message `m` has passed the receive stages: it and every later message of its pair
    /// that was waiting for it complete now.
    fn complete(&mut self, m: usize) -> Result<(), RunError> {
        self.msgs[m].received = true;
        let pair = (self.msgs[m].src, self.msgs[m].dst);
        while let Some(&first) = self.in_order.get(&pair).and_then(VecDeque::front) {
            if !self.msgs[first].received {
                break;
            }
            self.in_order.get_mut(&pair).expect("present").pop_front();
            self.finish(first)?;
        }
        Ok(())
    }

    fn finish(&mut self, m: usize) -> Result<(), RunError> {
        let msg = &mut self.msgs[m];
        let pair = (msg.src, msg.dst);
        if msg.complete.is_some() || self.last_complete.get(&pair).is_some_and(|&last| last > m) {
            return Err(RunError::Fabric(format!(
                "message {m} from {} to {} completed twice or overtook an earlier one",
                pair.0, pair.1
            )));
        }
        self.last_complete.insert(pair, m);
        msg.complete = Some(self.now);
        let first = msg.first_inject.expect("delivered, so injected");
        let host = (msg.host_done - msg.posted) + msg.rx_host;
        let fabric = msg.last_delivery - first;
        let (wire, waiting) = msg.wire.split(first, msg.last_delivery);
        let total = self.now - msg.posted;
        self.out.host_ps += u128::from(host);
        self.out.fabric_ps += u128::from(fabric);
        self.out.wire_ps += u128::from(wire);
        self.out.fabric_wait_ps += u128::from(waiting);
        self.out.nic_ps += u128::from(total.saturating_sub(host + fabric));
        self.out.message_ps += u128::from(total);
        let (src, dst, tag) = (msg.src, msg.dst, msg.tag);
        self.arrived
            .entry((src, dst, tag))
            .or_default()
            .push_back(m);
        if let RankState::Recv { since } = self.state[dst]
            && let Some(Op::Recv {
                peer, tag: want, ..
            }) = self.program.ranks[dst].get(self.pc[dst]).copied()
            && peer == src
            && want == tag
        {
            self.out.wait_ps += u128::from(self.now - since);
            self.state[dst] = RankState::Ready;
            self.schedule(self.now, Event::RankReady(dst));
        }
        Ok(())
    }

    /// The receiver took message `m`: a synchronous sender waiting for it may go on.
    fn consume(&mut self, m: usize) {
        self.msgs[m].consumed = true;
        let src = self.msgs[m].src;
        if self.state[src] == (RankState::Ssend { msg: m }) {
            self.out.wait_ps += u128::from(self.now - self.msgs[m].posted);
            self.state[src] = RankState::Ready;
            self.schedule(self.now, Event::RankReady(src));
        }
    }

    /// Names who waits for whom when some rank can never finish; `None` when all finished.
    fn diagnose(&self) -> Option<String> {
        let waiting: Vec<usize> = (0..self.state.len())
            .filter(|&r| self.state[r] != RankState::Done)
            .collect();
        if waiting.is_empty() {
            return None;
        }
        let waits_for = |r: usize| -> Option<usize> {
            match self.program.ranks[r].get(self.pc[r].saturating_sub(usize::from(matches!(
                self.state[r],
                RankState::Ssend { .. }
            )))) {
                Some(Op::Recv { peer, .. }) => Some(*peer),
                Some(Op::Ssend { peer, .. }) => Some(*peer),
                _ => None,
            }
        };
        let describe = |r: usize| {
            let i = match self.state[r] {
                RankState::Ssend { .. } => self.pc[r] - 1,
                _ => self.pc[r],
            };
            let peer_state = waits_for(r).map_or(String::new(), |p| match self.state[p] {
                RankState::Done => format!(" — rank {p} has finished"),
                _ => String::new(),
            });
            format!(
                "rank {r} waits in op {i} ({}){peer_state}",
                self.program.ranks[r][i]
            )
        };
        // Follow waits-for edges from the first waiting rank to find a cycle.
        let mut seen = vec![usize::MAX; self.state.len()];
        let mut r = waiting[0];
        let mut path = Vec::new();
        while seen[r] == usize::MAX {
            seen[r] = path.len();
            path.push(r);
            match waits_for(r) {
                Some(p) if self.state[p] != RankState::Done => r = p,
                _ => {
                    return Some(format!(
                        "{} ({} ranks still waiting)",
                        describe(r),
                        waiting.len()
                    ));
                }
            }
        }
        let cycle: Vec<String> = path[seen[r]..].iter().map(|&v| describe(v)).collect();
        let names: Vec<String> = path[seen[r]..]
            .iter()
            .chain([&r])
            .map(|v| v.to_string())
            .collect();
        Some(format!(
            "wait-for cycle {}: {} ({} ranks still waiting)",
            names.join(" → "),
            cycle.join("; "),
            waiting.len()
        ))
    }
}
