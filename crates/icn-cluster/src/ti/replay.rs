//! Replaying a TI trace over any [`Fabric`], SMPI's way.
//!
//! Each rank reads its actions one at a time ([`RankReader`]); a collective becomes that
//! rank's point-to-point [`Step`]s of the chosen algorithm, run before the next action is
//! read. Memory is ranks × outstanding requests, never the trace's length.
//!
//! Point-to-point semantics (SMPI's with its defaults, `smpi/async-small-thresh = 0`):
//! * a message moves when both its send and its receive are posted (matched per
//!   (source, destination, tag) in posting order); it is handed to the fabric then, cut into
//!   the fabric's largest packets, and complete when the last one is delivered;
//! * a send of fewer than `eager_bytes` bytes completes locally when posted (SMPI's
//!   `smpi/send-is-detached-thresh`, 65 536 by default): the sender goes on; a larger send
//!   completes with its transfer (rendezvous);
//! * `wait`, `waitall`, blocking `send`/`recv` and collectives block until their requests
//!   are complete; `test` of a pending request costs `test_s` × k of host time, then
//!   checks, where k starts at 1, grows by one after each test that finds its request
//!   incomplete and returns to 1 after one that finds it complete — counted over all ranks
//!   together, as SMPI's `smpi/grow-injected-times` does (a static counter); a `sendRecv` or
//!   collective exchange with oneself is a local copy (no time);
//! * `compute` takes `flops / host_flops`, `sleep` its seconds, a collective's reduction
//!   `flops` are charged to the host after it; at the end of its trace a rank waits for
//!   its outstanding requests (SimGrid does the same).
//!
//! With a NIC (`nic.kind` `simple` or `pipeline`) a matched message passes the sender's
//! endpoint stages, the fabric in the endpoint's packets, and the receiver's stages, as in
//! the cluster's own programs ([`crate::sim`]); its time is split into the same layers:
//! host = host stages on both sides, fabric = first packet injected → last delivered, NIC =
//! the rest of match → complete. With the `zero` NIC a message goes into the fabric whole
//! (cut only at the fabric's largest packet) the moment it is matched, as SimGrid's flows do.
//!
//! The run ends when every rank has ended. If nothing can happen any more while a rank is
//! blocked, the run stops with a diagnosis naming each blocked rank, its file:line and
//! what it waits for — never a hang.

use super::action::{Action, CollKind, Collective};
use super::reader::{RankReader, TraceError, TraceSet};
use crate::collectives::{Algorithm, Call, Step};
use crate::nic::{Cut, Endpoint};
use crate::timeline::{SpanKind, Timeline};
use crate::transmit::{Head, Transmit};
use icn_engine::model::Ticker;
use icn_fabric::zero_load::Wire;
use icn_fabric::{Delivery, Fabric, Packet, Ps};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

/// How a replay runs.
#[derive(Clone, Debug)]
pub struct ReplayConfig {
    /// Host speed, flops per second.
    pub host_flops: f64,
    /// Sends below this many bytes complete locally.
    pub eager_bytes: u64,
    /// Host time a `test` costs, seconds.
    pub test_s: f64,
    /// The algorithm of each collective, indexed as [`CollKind::ALL`].
    pub algorithms: Vec<&'static Algorithm>,
}

/// Where time went, as named slots: compute (with sleeps and reductions), point-to-point,
/// then one per collective.
pub fn slot_names() -> Vec<&'static str> {
    let mut v = vec!["compute", "p2p"];
    v.extend(CollKind::ALL.iter().map(|k| k.name()));
    v
}

fn slot_of(a: &Action) -> usize {
    match a {
        Action::Compute { .. } | Action::Sleep { .. } => 0,
        Action::Coll(c) => 2 + c.kind as usize,
        _ => 1,
    }
}

/// What a replay measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TiOutcome {
    /// When each rank ended.
    pub finish: Vec<Ps>,
    /// Per rank: time computing and sleeping (what a compute-only run would take).
    pub compute: Vec<Ps>,
    /// Per rank: time blocked on requests.
    pub wait: Vec<Ps>,
    pub messages: u64,
    pub bytes: u64,
    pub actions: u64,
    /// Per slot ([`slot_names`]): calls and time summed over ranks.
    pub slot_calls: Vec<u64>,
    pub slot_ps: Vec<u128>,
    /// Summed over messages: host, NIC and fabric time on each message's path (host and
    /// NIC are 0 with the `zero` NIC, where the fabric time is match → complete).
    pub host_ps: u128,
    pub nic_ps: u128,
    pub fabric_ps: u128,
    /// Summed over messages: the fabric time split into wire (the message's packets alone
    /// on the empty fabric from the same injection times) and waiting in the fabric.
    pub wire_ps: u128,
    pub fabric_wait_ps: u128,
    pub packets: u64,
}

/// Why a replay could not finish.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    #[error("{0}")]
    Trace(#[from] TraceError),
    #[error("the replay can never finish: {0}")]
    Stuck(String),
    /// The ranks' calls do not match as MPI requires (collectives of another kind, root or
    /// size; a send longer than its receive): a real run would fail or hang there.
    #[error("the replay cannot go on: {0}")]
    Mismatch(String),
    #[error("{0}")]
    Rank(String),
    #[error("fabric: {0}")]
    Fabric(String),
}

/// Tags of collective messages: above every user tag (< 2^31), one per collective call.
const COLL_TAG: u64 = 1 << 32;

#[derive(Clone, Debug)]
struct Req {
    owner: usize,
    src: usize,
    dst: usize,
    tag: u64,
    bytes: u64,
    send: bool,
    /// The owner may go on (a detached send at once; otherwise with the transfer).
    local_done: bool,
    /// The transfer is over (or, for an unmatched request, not started).
    transfer_done: bool,
    /// The owner no longer refers to it.
    released: bool,
    line: usize,
}

struct Transfer {
    send: usize,
    recv: usize,
    pieces_left: u64,
    /// When it was matched, and (with a NIC) its packets and layer times so far.
    started: Ps,
    cut: Cut,
    host_tx: Ps,
    rx_host: Ps,
    first_inject: Option<Ps>,
    last_delivery: Ps,
    wire: Wire,
    /// The last packet has passed the receive stages then.
    rx_ready: Ps,
}

/// What wakes up in the event queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Wake {
    Rank(usize),
    /// The packet at node `.0`'s last send stage has passed it: into the fabric, if it
    /// takes it now ([`Transmit`]).
    TxReady(usize),
    /// Transfer `tid` has passed the receiver's stages.
    Complete(usize),
}

struct Rank {
    reader: RankReader,
    steps: VecDeque<Step>,
    /// Tag of the messages `steps` exchange.
    step_tag: u64,
    /// Requests of the running collective's Isend/Irecv steps.
    pending: Vec<usize>,
    /// Reduction flops still to charge after `steps`.
    flops_after: f64,
    /// The TI request storage: per (src, dst, tag), posted requests (`None`: completed by a
    /// `test`), as SimGrid keeps it.
    user: HashMap<(usize, usize, u32), VecDeque<Option<usize>>>,
    /// Keys ever posted (a `wait` on any other is an error).
    posted: HashMap<(usize, usize, u32), ()>,
    /// Requests the rank is blocked on.
    wait: Vec<usize>,
    since: Ps,
    /// A `test` waiting for its host time to pass.
    test: Option<(usize, usize, u32)>,
    coll_seq: u64,
    /// Busy on its host (compute, sleep, test) until then: an earlier wake-up (a message
    /// that completed meanwhile) is ignored.
    busy_until: Ps,
    done: bool,
    line: usize,
    action: &'static str,
    slot: usize,
    slot_start: Ps,
}

pub struct Replay<'a, F: Fabric + ?Sized> {
    fabric: &'a mut F,
    cfg: &'a ReplayConfig,
    /// `None`: the `zero` NIC.
    endpoint: Option<&'a Endpoint>,
    /// Every node's send side: transfers waiting for the stages and the fabric (the `zero`
    /// NIC's has no stages: its packets go in as soon as the fabric takes them).
    transmit: Transmit,
    /// Nodes whose packet the fabric refused, ascending: retried after each fabric step.
    blocked: Vec<usize>,
    /// Per node and receive stage: when the stage is next free.
    rx_free: Vec<Ps>,
    now: Ps,
    heap: BinaryHeap<Reverse<(Ps, u64, Wake)>>,
    seq: u64,
    ranks: Vec<Rank>,
    reqs: Vec<Option<Req>>,
    free_reqs: Vec<usize>,
    transfers: Vec<Option<Transfer>>,
    free_transfers: Vec<usize>,
    /// A fabric's [`Fabric::zero_load`] failed where no error could be returned.
    zero_load_error: Option<String>,
    /// Calls that do not match (found where no error could be returned), reported at the
    /// next event.
    mismatch: Option<String>,
    /// Per collective call number reached by some ranks and not yet by all: what the first
    /// rank called, to check every other rank's call against (at most one entry per call
    /// in progress: ranks × the calls the fastest rank is ahead).
    collectives: HashMap<u64, FirstCall>,
    unmatched_sends: HashMap<(usize, usize, u64), VecDeque<usize>>,
    unmatched_recvs: HashMap<(usize, usize, u64), VecDeque<usize>>,
    /// SMPI's `nsleeps`: the multiple of `test_s` the next `test` costs.
    test_sleeps: u64,
    out: TiOutcome,
    /// Where the calls, waits and channel loads go, when asked ([`Replay::recording`]).
    timeline: Option<&'a mut Timeline>,
}

fn action_name(a: &Action) -> &'static str {
    match a {
        Action::Init { .. } => "init",
        Action::Finalize => "finalize",
        Action::Comm => "comm",
        Action::Send { blocking: true, .. } => "send",
        Action::Send { .. } => "isend",
        Action::Recv { blocking: true, .. } => "recv",
        Action::Recv { .. } => "irecv",
        Action::Test { .. } => "test",
        Action::Wait { .. } => "wait",
        Action::WaitAll => "waitall",
        Action::SendRecv { .. } => "sendRecv",
        Action::Coll(c) => c.kind.name(),
        Action::Compute { .. } => "compute",
        Action::Sleep { .. } => "sleep",
        Action::Location => "location",
    }
}

impl<'a, F: Fabric + ?Sized> Replay<'a, F> {
    /// Opens every rank's trace (the pre-scan has checked them); `endpoint` is the NIC of
    /// every node (one without stages is the `zero` NIC).
    pub fn new(
        fabric: &'a mut F,
        set: &TraceSet,
        cfg: &'a ReplayConfig,
        endpoint: &'a Endpoint,
    ) -> Result<Self, ReplayError> {
        let n = set.ranks();
        let mut ranks = Vec::with_capacity(n);
        for reader in RankReader::open_all(set)? {
            ranks.push(Rank {
                reader,
                steps: VecDeque::new(),
                step_tag: 0,
                pending: Vec::new(),
                flops_after: 0.0,
                user: HashMap::new(),
                posted: HashMap::new(),
                wait: Vec::new(),
                since: 0,
                test: None,
                coll_seq: 0,
                busy_until: 0,
                done: false,
                line: 0,
                action: "start",
                slot: 1,
                slot_start: 0,
            });
        }
        let slots = slot_names().len();
        let staged = !(endpoint.tx.is_empty() && endpoint.rx.is_empty());
        Ok(Replay {
            fabric,
            cfg,
            endpoint: staged.then_some(endpoint),
            transmit: Transmit::new(if staged { &endpoint.tx } else { &[] }, n),
            blocked: Vec::new(),
            rx_free: vec![0; if staged { n * endpoint.rx.len() } else { 0 }],
            now: 0,
            heap: BinaryHeap::new(),
            seq: 0,
            ranks,
            reqs: Vec::new(),
            free_reqs: Vec::new(),
            transfers: Vec::new(),
            free_transfers: Vec::new(),
            zero_load_error: None,
            mismatch: None,
            collectives: HashMap::new(),
            unmatched_sends: HashMap::new(),
            unmatched_recvs: HashMap::new(),
            test_sleeps: 1,
            out: TiOutcome {
                finish: vec![0; n],
                compute: vec![0; n],
                wait: vec![0; n],
                slot_calls: vec![0; slots],
                slot_ps: vec![0; slots],
                ..TiOutcome::default()
            },
            timeline: None,
        })
    }

    /// Records the run's timeline into `t` as it goes.
    pub fn recording(mut self, t: &'a mut Timeline) -> Self {
        self.timeline = Some(t);
        self
    }

    fn record(&mut self, r: usize, kind: SpanKind, name: &'static str, start: Ps) {
        if let Some(t) = self.timeline.as_deref_mut() {
            t.span(r, kind, name, start, self.now);
        }
    }

    /// Utilisation samples due by now.
    fn sample(&mut self) {
        if let Some(t) = self.timeline.as_deref_mut()
            && self.now >= t.next_sample()
        {
            let fabric = &*self.fabric;
            t.sample(self.now, || fabric.channel_loads(), fabric.cycle_ps());
        }
    }

    fn schedule(&mut self, t: Ps, r: usize) {
        self.wake(t, Wake::Rank(r));
    }

    fn wake(&mut self, t: Ps, w: Wake) {
        self.heap.push(Reverse((t, self.seq, w)));
        self.seq += 1;
    }

    /// Where rank `r` is, for messages: `file:line (action)`.
    fn at(&self, r: usize) -> String {
        let k = &self.ranks[r];
        format!("{}:{} ({})", k.reader.path(), k.line, k.action)
    }

    /// Runs every rank to the end of its trace, moving `ticker` by the actions replayed.
    pub fn run(mut self, ticker: &mut Ticker) -> Result<TiOutcome, ReplayError> {
        self.fabric.set_measuring(true);
        for r in 0..self.ranks.len() {
            self.schedule(0, r);
        }
        let mut deliveries = Vec::new();
        let mut reported = 0;
        loop {
            let te = self.heap.peek().map(|Reverse((t, _, _))| *t);
            let tf = self.fabric.next_event();
            match (te, tf) {
                (None, None) => break,
                (te, Some(tf)) if te.is_none_or(|te| tf < te) => {
                    self.fabric
                        .advance(tf.saturating_add(1), &mut deliveries)
                        .map_err(|e| ReplayError::Fabric(e.to_string()))?;
                    for d in deliveries.drain(..) {
                        self.now = self.now.max(d.delivered);
                        self.delivered(d)?;
                    }
                    self.sample();
                    self.retry_blocked();
                    if let Some(e) = self.zero_load_error.take() {
                        return Err(ReplayError::Fabric(e));
                    }
                }
                (Some(te), _) => {
                    if self.fabric.now() < te {
                        self.fabric
                            .skip_idle(te)
                            .map_err(|e| ReplayError::Fabric(e.to_string()))?;
                    }
                    let Reverse((t, _, w)) = self.heap.pop().expect("peeked");
                    self.now = self.now.max(t);
                    self.sample();
                    match w {
                        Wake::Rank(r) => self.run_rank(r)?,
                        Wake::TxReady(node) => self.send_head(node, self.now),
                        Wake::Complete(tid) => self.complete(tid),
                    }
                    if let Some(e) = self.zero_load_error.take() {
                        return Err(ReplayError::Fabric(e));
                    }
                    if let Some(e) = self.mismatch.take() {
                        return Err(ReplayError::Mismatch(e));
                    }
                    if self.out.actions - reported >= 1024 {
                        ticker.add(self.out.actions - reported);
                        reported = self.out.actions;
                    }
                }
                (None, Some(_)) => unreachable!("handled by the fabric arm"),
            }
        }
        ticker.add(self.out.actions - reported);
        if let Some(why) = self.diagnose() {
            return Err(ReplayError::Stuck(why));
        }
        if let Some(t) = self.timeline.take() {
            let end = self.out.finish.iter().copied().max().unwrap_or(0);
            t.finish(end, self.fabric.channel_loads(), self.fabric.cycle_ps());
        }
        Ok(self.out)
    }

    /// `now + secs` in picoseconds, or an error naming rank `r`'s line.
    fn later(&self, r: usize, secs: f64) -> Result<Ps, ReplayError> {
        let ps = secs * 1e12;
        (ps.is_finite() && ps >= 0.0 && ps < u64::MAX as f64)
            .then(|| ps.round() as Ps)
            .and_then(|d| self.now.checked_add(d))
            .ok_or_else(|| {
                ReplayError::Rank(format!(
                    "rank {r} at {}: simulated time passes 2^64 ps (213 days)",
                    self.at(r)
                ))
            })
    }

    /// Rank `r` runs until it blocks, takes time or ends.
    fn run_rank(&mut self, r: usize) -> Result<(), ReplayError> {
        if self.ranks[r].done || self.now < self.ranks[r].busy_until {
            return Ok(());
        }
        if let Some((src, dst, tag)) = self.ranks[r].test.take() {
            self.finish_test(r, src, dst, tag);
        }
        loop {
            // Blocked?
            if !self.ranks[r].wait.is_empty() {
                let all = self.ranks[r]
                    .wait
                    .iter()
                    .all(|&id| self.reqs[id].as_ref().is_some_and(|q| q.local_done));
                if !all {
                    return Ok(());
                }
                let since = self.ranks[r].since;
                self.out.wait[r] += self.now - since;
                if self.now > since {
                    self.record(r, SpanKind::Wait, "wait", since);
                }
                for id in std::mem::take(&mut self.ranks[r].wait) {
                    self.release(id);
                }
            }
            if let Some(step) = self.ranks[r].steps.pop_front() {
                self.step(r, step);
                continue;
            }
            let flops = std::mem::take(&mut self.ranks[r].flops_after);
            if flops > 0.0 {
                let t = self.later(r, flops / self.cfg.host_flops)?;
                self.out.compute[r] += t - self.now;
                self.ranks[r].busy_until = t;
                self.schedule(t, r);
                return Ok(());
            }
            // The next action.
            let (name, start) = (self.ranks[r].action, self.ranks[r].slot_start);
            if name != "start" {
                self.record(r, SpanKind::Call, name, start);
            }
            let k = &mut self.ranks[r];
            self.out.slot_ps[k.slot] += u128::from(self.now - k.slot_start);
            let next = k.reader.next_action()?;
            let Some((line, a)) = next else {
                // End of trace: wait for what is outstanding, then end.
                let outstanding: Vec<usize> =
                    k.user.drain().flat_map(|(_, q)| q).flatten().collect();
                k.action = "end of trace";
                k.slot = 1;
                k.slot_start = self.now;
                if !outstanding.is_empty() {
                    k.wait = outstanding;
                    k.since = self.now;
                    continue;
                }
                k.done = true;
                self.out.finish[r] = self.now;
                return Ok(());
            };
            k.line = line;
            k.action = action_name(&a);
            k.slot = slot_of(&a);
            k.slot_start = self.now;
            self.out.slot_calls[k.slot] += 1;
            self.out.actions += 1;
            if let Some(t) = self.action(r, a)? {
                self.ranks[r].busy_until = t;
                self.schedule(t, r);
                return Ok(());
            }
        }
    }

    /// Runs one action; `Some(t)`: the rank is busy until `t`.
    fn action(&mut self, r: usize, a: Action) -> Result<Option<Ps>, ReplayError> {
        match a {
            Action::Init { .. } | Action::Finalize | Action::Comm | Action::Location => {}
            Action::Compute { flops } => {
                let t = self.later(r, flops / self.cfg.host_flops)?;
                self.out.compute[r] += t - self.now;
                return Ok(Some(t));
            }
            Action::Sleep { seconds } => {
                let t = self.later(r, seconds)?;
                self.out.compute[r] += t - self.now;
                return Ok(Some(t));
            }
            Action::Send {
                peer,
                tag,
                bytes,
                blocking,
            } => {
                let id = self.post(r, r, peer, u64::from(tag), bytes, true);
                if blocking {
                    self.block_on(r, vec![id]);
                } else {
                    self.store(r, (r, peer, tag), id);
                }
            }
            Action::Recv {
                peer,
                tag,
                bytes,
                blocking,
            } => {
                let id = self.post(r, peer, r, u64::from(tag), bytes, false);
                if blocking {
                    self.block_on(r, vec![id]);
                } else {
                    self.store(r, (peer, r, tag), id);
                }
            }
            Action::Wait { src, dst, tag } => {
                let key = (src, dst, tag);
                let k = &mut self.ranks[r];
                if !k.posted.contains_key(&key) {
                    return Err(ReplayError::Rank(format!(
                        "rank {r} at {}: wait for the request ({src}, {dst}, tag {tag}), but this rank posted no isend/irecv with that source, destination and tag",
                        self.at(r)
                    )));
                }
                let popped = k.user.get_mut(&key).and_then(VecDeque::pop_front);
                if let Some(Some(id)) = popped {
                    self.block_on(r, vec![id]);
                }
            }
            Action::Test { src, dst, tag } => {
                // A test of nothing pending (completed by an earlier test) does nothing.
                let pending = self.ranks[r]
                    .user
                    .get(&(src, dst, tag))
                    .and_then(VecDeque::front)
                    .is_some_and(Option::is_some);
                if pending {
                    let t = self.later(r, self.cfg.test_s * self.test_sleeps as f64)?;
                    self.ranks[r].test = Some((src, dst, tag));
                    return Ok(Some(t));
                }
            }
            Action::WaitAll => {
                let ids: Vec<usize> = self.ranks[r]
                    .user
                    .drain()
                    .flat_map(|(_, q)| q)
                    .flatten()
                    .collect();
                self.block_on(r, ids);
            }
            Action::SendRecv {
                send,
                dst,
                recv,
                src,
            } => {
                if !(dst == r && src == r) {
                    let k = &mut self.ranks[r];
                    k.step_tag = 0;
                    k.steps.extend([
                        Step::Isend {
                            to: dst,
                            bytes: send,
                        },
                        Step::Irecv {
                            from: src,
                            bytes: recv,
                        },
                        Step::WaitAll,
                    ]);
                }
            }
            Action::Coll(c) => self.collective(r, &c),
        }
        Ok(None)
    }

    fn collective(&mut self, r: usize, c: &Collective) {
        let n = self.ranks.len();
        let alg = self.cfg.algorithms[c.kind as usize];
        let steps = alg.steps(&Call {
            rank: r,
            n,
            root: c.root,
            bytes: c.bytes,
            counts: &c.counts,
            recv_counts: &c.recv_counts,
        });
        let k = &mut self.ranks[r];
        k.coll_seq += 1;
        k.step_tag = COLL_TAG | k.coll_seq;
        k.steps.extend(steps);
        k.flops_after = c.flops;
        let seq = k.coll_seq;
        self.match_collective(r, seq, c);
    }

    /// Checks rank `r`'s collective call number `seq` against the first rank's: MPI requires
    /// every rank to call the same collective with the same root and (for those whose size
    /// is the same everywhere) the same size. A mismatch stops the run naming both calls.
    fn match_collective(&mut self, r: usize, seq: u64, c: &Collective) {
        let n = self.ranks.len();
        let call = CollCall::of(c);
        match self.collectives.get_mut(&seq) {
            None if n > 1 => {
                self.collectives.insert(
                    seq,
                    FirstCall {
                        rank: r,
                        at: self.at(r),
                        call,
                        reached: 1,
                    },
                );
            }
            None => {}
            Some(first) if first.call != call => {
                let (fr, fat, fcall) = (first.rank, first.at.clone(), first.call.to_string());
                self.mismatch.get_or_insert(format!(
                    "collective #{seq} does not match: rank {fr} at {fat} calls {fcall}, \
                     rank {r} at {} calls {call} (every rank must call the same collective \
                     with the same root and sizes)",
                    self.at(r)
                ));
            }
            Some(first) => {
                first.reached += 1;
                if first.reached == n {
                    self.collectives.remove(&seq);
                }
            }
        }
    }

    fn step(&mut self, r: usize, s: Step) {
        let tag = self.ranks[r].step_tag;
        match s {
            Step::Send { to, bytes } => {
                let id = self.post(r, r, to, tag, bytes, true);
                self.block_on(r, vec![id]);
            }
            Step::Recv { from, bytes } => {
                let id = self.post(r, from, r, tag, bytes, false);
                self.block_on(r, vec![id]);
            }
            Step::Isend { to, bytes } => {
                let id = self.post(r, r, to, tag, bytes, true);
                self.ranks[r].pending.push(id);
            }
            Step::Irecv { from, bytes } => {
                let id = self.post(r, from, r, tag, bytes, false);
                self.ranks[r].pending.push(id);
            }
            Step::WaitAll => {
                let ids = std::mem::take(&mut self.ranks[r].pending);
                self.block_on(r, ids);
            }
        }
    }

    fn block_on(&mut self, r: usize, ids: Vec<usize>) {
        let k = &mut self.ranks[r];
        k.wait = ids;
        k.since = self.now;
    }

    fn store(&mut self, r: usize, key: (usize, usize, u32), id: usize) {
        let k = &mut self.ranks[r];
        k.posted.insert(key, ());
        k.user.entry(key).or_default().push_back(Some(id));
    }

    /// A `test` after its host time: a complete request leaves a null entry (a later
    /// `wait` returns at once), an incomplete one goes to the back, as in SimGrid.
    fn finish_test(&mut self, r: usize, src: usize, dst: usize, tag: u32) {
        let key = (src, dst, tag);
        let Some(Some(id)) = self.ranks[r]
            .user
            .get_mut(&key)
            .and_then(VecDeque::pop_front)
        else {
            return;
        };
        let done = self.reqs[id].as_ref().is_some_and(|q| q.local_done);
        self.test_sleeps = if done { 1 } else { self.test_sleeps + 1 };
        let q = self.ranks[r].user.entry(key).or_default();
        if done {
            q.push_back(None);
            self.release(id);
        } else {
            q.push_back(Some(id));
        }
    }

    /// Posts a request of rank `owner`; matches it if its partner is posted.
    fn post(
        &mut self,
        owner: usize,
        src: usize,
        dst: usize,
        tag: u64,
        bytes: u64,
        send: bool,
    ) -> usize {
        let detached = send && bytes < self.cfg.eager_bytes;
        let req = Req {
            owner,
            src,
            dst,
            tag,
            bytes,
            send,
            local_done: detached,
            transfer_done: false,
            released: false,
            line: self.ranks[owner].line,
        };
        let id = match self.free_reqs.pop() {
            Some(id) => {
                self.reqs[id] = Some(req);
                id
            }
            None => {
                self.reqs.push(Some(req));
                self.reqs.len() - 1
            }
        };
        let key = (src, dst, tag);
        let (other, mine) = if send {
            (&mut self.unmatched_recvs, &mut self.unmatched_sends)
        } else {
            (&mut self.unmatched_sends, &mut self.unmatched_recvs)
        };
        let partner = other.get_mut(&key).and_then(VecDeque::pop_front);
        if other.get(&key).is_some_and(VecDeque::is_empty) {
            other.remove(&key);
        }
        match partner {
            Some(p) => {
                let (s, rv) = if send { (id, p) } else { (p, id) };
                self.start(s, rv);
            }
            None => mine.entry(key).or_default().push_back(id),
        }
        id
    }

    /// A matched pair: the message goes into the fabric now (`zero` NIC), or into the
    /// sender's endpoint stages, which inject its packets as they pass.
    fn start(&mut self, send: usize, recv: usize) {
        let q = self.reqs[send].as_ref().expect("live send");
        let (src, dst, bytes) = (q.src, q.dst, q.bytes);
        let into = self.reqs[recv].as_ref().expect("live receive");
        if bytes > into.bytes {
            // MPI_ERR_TRUNCATE: the receive buffer is shorter than the message.
            let what = if q.tag >= COLL_TAG {
                format!("collective #{}", q.tag - COLL_TAG)
            } else {
                format!("tag {}", q.tag)
            };
            let (sline, rline) = (q.line, into.line);
            self.mismatch.get_or_insert(format!(
                "message truncated (MPI_ERR_TRUNCATE): rank {dst} at {}:{rline} receives at \
                 most {} B from rank {src} ({what}), and rank {src}'s send at {}:{sline} is \
                 {bytes} B",
                self.ranks[dst].reader.path(),
                into.bytes,
                self.ranks[src].reader.path(),
            ));
        }
        self.out.messages += 1;
        self.out.bytes += bytes;
        let max = u64::from(self.fabric.max_packet_bytes()).max(1);
        let cut = match self.endpoint {
            Some(e) => e.cut(bytes, max),
            None => Cut::plain(bytes, max),
        };
        let count = cut.count();
        self.out.packets += count;
        let t = Transfer {
            send,
            recv,
            pieces_left: count,
            started: self.now,
            cut,
            host_tx: 0,
            rx_host: 0,
            first_inject: None,
            last_delivery: 0,
            wire: Wire::default(),
            rx_ready: 0,
        };
        let tid = match self.free_transfers.pop() {
            Some(i) => {
                self.transfers[i] = Some(t);
                i
            }
            None => {
                self.transfers.push(Some(t));
                self.transfers.len() - 1
            }
        };
        // One event sequence number per packet, reserved now: packets ready at equal times
        // go in the order they had when all were scheduled at the match.
        let seq_base = self.seq;
        if self.endpoint.is_some() {
            self.seq += count;
        }
        let (host_done, head) = self.transmit.post(src, tid, cut, self.now, seq_base);
        self.transfers[tid].as_mut().expect("just stored").host_tx = host_done - self.now;
        if let Some(h) = head {
            self.schedule_head(src, h);
        }
    }

    /// Node `node`'s head packet, when it has passed the stages; the `zero` NIC's, which
    /// has none, goes in at once.
    fn schedule_head(&mut self, node: usize, h: Head) {
        if self.endpoint.is_none() && h.ready <= self.now {
            self.send_head(node, self.now);
        } else {
            self.heap
                .push(Reverse((h.ready.max(self.now), h.seq, Wake::TxReady(node))));
        }
    }

    /// Node `node`'s head packet goes into the fabric at `at` if its input queue has room
    /// (then the next, at once with the `zero` NIC, while the fabric takes them); otherwise
    /// the node holds it and is retried after the next fabric step.
    fn send_head(&mut self, node: usize, at: Ps) {
        let header = self.endpoint.map_or(0, |e| e.header_bytes);
        while let Some(h) = self.transmit.head(node) {
            let t = self.transfers[h.id].as_ref().expect("live transfer");
            let q = self.reqs[t.send].as_ref().expect("live send");
            let p = Packet {
                src: q.src,
                dst: q.dst,
                bytes: (h.piece.bytes + header) as u32,
                tag: (h.id as u64) << 32 | h.index,
            };
            let alone = self.fabric.zero_load(p.src, p.dst, p.bytes);
            if self.fabric.try_inject(p).is_err() {
                if let Err(k) = self.blocked.binary_search(&node) {
                    self.blocked.insert(k, node);
                }
                return;
            }
            let fabric_now = self.fabric.now();
            let t = self.transfers[h.id].as_mut().expect("live transfer");
            if self.endpoint.is_some() {
                t.first_inject.get_or_insert(at);
            }
            match alone {
                // A clocked fabric takes the packet at its next cycle: that alignment is
                // the fabric's own, alone or not.
                Ok(alone) => t.wire.add(fabric_now.max(at), alone),
                Err(e) => {
                    self.zero_load_error.get_or_insert(e.to_string());
                }
            }
            match self.transmit.taken(node, at) {
                Some(next) if self.endpoint.is_none() && next.ready <= at => continue,
                Some(next) => self.heap.push(Reverse((
                    next.ready.max(self.now),
                    next.seq,
                    Wake::TxReady(node),
                ))),
                None => {}
            }
            return;
        }
    }

    /// After a fabric step: every refused node whose input queue has room now sends.
    fn retry_blocked(&mut self) {
        if self.blocked.is_empty() {
            return;
        }
        let at = self.fabric.now().max(self.now);
        for node in std::mem::take(&mut self.blocked) {
            if self.fabric.can_inject(node) {
                self.send_head(node, at);
            } else {
                self.blocked.push(node);
            }
        }
    }

    fn delivered(&mut self, d: Delivery) -> Result<(), ReplayError> {
        let tid = (d.packet.tag >> 32) as usize;
        let piece = (d.packet.tag & 0xffff_ffff) as usize;
        let t = self
            .transfers
            .get_mut(tid)
            .and_then(Option::as_mut)
            .ok_or_else(|| {
                ReplayError::Fabric(format!("a delivery of no message: {}", d.packet))
            })?;
        t.pieces_left -= 1;
        let Some(endpoint) = self.endpoint else {
            if t.pieces_left == 0 {
                self.out.fabric_ps += u128::from(self.now - t.started);
                let (wire, waiting) = t.wire.split(t.started, self.now);
                self.out.wire_ps += u128::from(wire);
                self.out.fabric_wait_ps += u128::from(waiting);
                self.complete(tid);
            }
            return Ok(());
        };
        // The receive stages, in arrival order.
        let (ready, host) = endpoint.receive_piece(
            &t.cut.piece(piece as u64),
            d.packet.dst,
            d.delivered,
            &mut self.rx_free,
        );
        t.rx_host += host;
        t.last_delivery = t.last_delivery.max(d.delivered);
        t.rx_ready = t.rx_ready.max(ready);
        if t.pieces_left == 0 {
            let at = t.rx_ready;
            self.wake(at, Wake::Complete(tid));
        }
        Ok(())
    }

    /// Transfer `tid` is complete in the receiver's memory: both requests are done.
    fn complete(&mut self, tid: usize) {
        let t = self.transfers[tid].take().expect("live transfer");
        self.free_transfers.push(tid);
        if self.endpoint.is_some() {
            let host = t.host_tx + t.rx_host;
            let first = t.first_inject.expect("delivered, so injected");
            let fabric = t.last_delivery - first;
            let (wire, waiting) = t.wire.split(first, t.last_delivery);
            let total = self.now - t.started;
            self.out.host_ps += u128::from(host);
            self.out.fabric_ps += u128::from(fabric);
            self.out.wire_ps += u128::from(wire);
            self.out.fabric_wait_ps += u128::from(waiting);
            self.out.nic_ps += u128::from(total.saturating_sub(host + fabric));
        }
        for id in [t.send, t.recv] {
            let q = self.reqs[id].as_mut().expect("live request");
            q.transfer_done = true;
            q.local_done = true;
            let owner = q.owner;
            if q.released {
                self.free(id);
            } else if self.ranks[owner].wait.contains(&id) {
                self.schedule(self.now, owner);
            }
        }
    }

    /// The owner is done with request `id`.
    fn release(&mut self, id: usize) {
        let q = self.reqs[id].as_mut().expect("live request");
        q.released = true;
        if q.transfer_done {
            self.free(id);
        }
    }

    fn free(&mut self, id: usize) {
        self.reqs[id] = None;
        self.free_reqs.push(id);
    }

    /// Describes request `id` for a diagnosis.
    fn describe(&self, id: usize) -> String {
        let Some(q) = self.reqs[id].as_ref() else {
            return "a completed request".into();
        };
        let tag = if q.tag >= COLL_TAG {
            format!("collective #{}", q.tag - COLL_TAG)
        } else {
            format!("tag {}", q.tag)
        };
        let matched = !self
            .unmatched_sends
            .values()
            .chain(self.unmatched_recvs.values())
            .any(|v| v.contains(&id));
        let peer = if q.send { q.dst } else { q.src };
        let peer_state = if self.ranks[peer].done {
            format!("rank {peer} has ended its trace")
        } else {
            format!("rank {peer} is at {}", self.at(peer))
        };
        match (q.send, matched) {
            (true, false) => format!(
                "send of {} B to rank {peer} ({tag}, posted at line {}) that no receive matches; {peer_state}",
                q.bytes, q.line
            ),
            (false, false) => format!(
                "receive of {} B from rank {peer} ({tag}, posted at line {}) that no send matches; {peer_state}",
                q.bytes, q.line
            ),
            (_, true) => format!("a message with rank {peer} in flight ({tag})"),
        }
    }

    /// Names every blocked rank (up to 8) and what it waits for; `None` when all ended.
    fn diagnose(&self) -> Option<String> {
        let stuck: Vec<usize> = (0..self.ranks.len())
            .filter(|&r| !self.ranks[r].done)
            .collect();
        if stuck.is_empty() {
            return None;
        }
        let mut lines = Vec::new();
        for &r in stuck.iter().take(8) {
            let k = &self.ranks[r];
            let waits: Vec<String> = k
                .wait
                .iter()
                .filter(|&&id| self.reqs[id].as_ref().is_some_and(|q| !q.local_done))
                .take(3)
                .map(|&id| self.describe(id))
                .collect();
            lines.push(format!(
                "rank {r} at {} waits for {}",
                self.at(r),
                waits.join("; ")
            ));
        }
        let more = if stuck.len() > 8 {
            format!(" (and {} more ranks)", stuck.len() - 8)
        } else {
            String::new()
        };
        Some(format!(
            "{} ranks blocked: {}{more}",
            stuck.len(),
            lines.join(" | ")
        ))
    }
}

/// What the first rank to reach a collective call called, and how many ranks reached it.
struct FirstCall {
    rank: usize,
    at: String,
    call: CollCall,
    reached: usize,
}

/// What every rank's call of one collective must agree on: the kind, the root of a rooted
/// collective, and the size where it is the same on every rank (the v variants' blocks
/// differ per rank by design).
#[derive(Clone, Debug, PartialEq, Eq)]
struct CollCall {
    kind: CollKind,
    root: Option<usize>,
    bytes: Option<u64>,
}

impl CollCall {
    fn of(c: &Collective) -> CollCall {
        use CollKind::*;
        let rooted = matches!(
            c.kind,
            Bcast | Reduce | Gather | Gatherv | Scatter | Scatterv
        );
        let same_size = matches!(
            c.kind,
            Bcast | Reduce | Allreduce | Alltoall | Gather | Scatter | Allgather | Scan | Exscan
        );
        CollCall {
            kind: c.kind,
            root: rooted.then_some(c.root),
            bytes: same_size.then_some(c.bytes),
        }
    }
}

impl std::fmt::Display for CollCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.kind.name())?;
        if let Some(b) = self.bytes {
            write!(f, " of {b} B")?;
        }
        if let Some(root) = self.root {
            write!(f, " from root {root}")?;
        }
        Ok(())
    }
}
