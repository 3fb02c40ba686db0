//! The event queue over resources: chunks of messages flowing through a [`Pipeline`].
//!
//! Rules (deliberately few, so hand calculation is possible):
//!
//! 1. Every stage serves chunks in message order, then chunk order (an in-order pipeline, as
//!    NIC firmware state machines are).
//! 2. A stage starts when its next chunk has arrived and **all** resources it holds are free;
//!    among stages that could start at the same instant, the one whose chunk became ready
//!    earliest wins (ties: lower message, chunk, stage). A stage that cannot start claims its
//!    free resources, so a later request cannot overtake it (FIFO per resource).
//! 3. A stage that does not apply to a chunk (`first` / `last`) passes it on at once, but only
//!    after the previous chunk passed (so data never overtakes its descriptor).
//! 4. A `branch` stage (the send-completion status write) receives the chunk while the chunk
//!    moves straight on to the next main-path stage: delivery does not wait for it.
//! 5. Time is integer picoseconds; events are ordered by (time, sequence number), so a run is
//!    a pure function of its inputs and the RNG used for TLB misses.
//!
//! Node 0 and node 1 each have one instance of every per-node resource; per-link resources
//! have one instance per direction.

use crate::design::{Every, Pipeline, Side};
use rand::Rng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// One message to move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Message {
    pub bytes: u64,
    /// Sending node (0 or 1); the receiver is the other one.
    pub from: usize,
    /// May start only after this message was received (pingpong).
    pub after_rx_of: Option<usize>,
    /// May start only after this message's send completed (bounded send queue).
    pub after_tx_of: Option<usize>,
}

/// When one message passed its milestones, µs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Times {
    pub start_us: f64,
    pub tx_done_us: f64,
    pub rx_done_us: f64,
}

const PS: f64 = 1e6;

#[derive(Clone, Copy, Debug, Default)]
struct Chunk {
    msg: usize,
    idx: usize,
    last: bool,
    bytes: u64,
    /// Stage the chunk waits for or occupies; `stages.len()` when done.
    stage: usize,
    ready: u64,
}

/// Runs `messages` through `pipe`; `rng` draws NIC TLB misses.
pub fn run<R: Rng>(pipe: &Pipeline, messages: &[Message], rng: &mut R) -> Vec<Times> {
    Sim::new(pipe, messages).run(rng)
}

struct Sim<'a> {
    pipe: &'a Pipeline,
    msgs: &'a [Message],
    chunks: Vec<Chunk>,
    /// Next chunk (global index) each stage serves.
    next: Vec<usize>,
    /// Chunks handed to each branch stage, with the time they became ready, in order.
    branch_q: Vec<VecDeque<(usize, u64)>>,
    busy: Vec<bool>,
    tx_done: Vec<Option<u64>>,
    rx_done: Vec<Option<u64>>,
    start: Vec<u64>,
    last_tx: usize,
    /// Messages that entered but have not left each side (tx from `nic_entry`, rx).
    active: [usize; 2],
    first_rx: usize,
    heap: BinaryHeap<Reverse<(u64, u64, usize, usize)>>,
    seq: u64,
    now: u64,
}

impl<'a> Sim<'a> {
    fn new(pipe: &'a Pipeline, msgs: &'a [Message]) -> Self {
        let mut chunks = Vec::new();
        for (m, msg) in msgs.iter().enumerate() {
            let n = msg.bytes.div_ceil(pipe.chunk_bytes).max(1);
            for i in 0..n {
                let bytes = if i + 1 < n {
                    pipe.chunk_bytes
                } else {
                    msg.bytes - pipe.chunk_bytes * (n - 1)
                };
                chunks.push(Chunk {
                    msg: m,
                    idx: i as usize,
                    last: i + 1 == n,
                    bytes,
                    stage: 0,
                    ready: 0,
                });
            }
        }
        let last_tx = pipe
            .stages
            .iter()
            .rposition(|s| s.side == Side::Tx)
            .unwrap_or(0);
        Sim {
            pipe,
            msgs,
            chunks,
            next: vec![0; pipe.stages.len()],
            branch_q: vec![VecDeque::new(); pipe.stages.len()],
            busy: vec![false; pipe.resources.len() * 2],
            tx_done: vec![None; msgs.len()],
            rx_done: vec![None; msgs.len()],
            start: vec![0; msgs.len()],
            last_tx,
            active: [0, 0],
            first_rx: last_tx + 1,
            heap: BinaryHeap::new(),
            seq: 0,
            now: 0,
        }
    }

    fn run<R: Rng>(mut self, rng: &mut R) -> Vec<Times> {
        self.dispatch(rng);
        while let Some(Reverse((t, _, ci, s))) = self.heap.pop() {
            self.now = t;
            if s != usize::MAX {
                self.finish(ci, s);
            }
            self.dispatch(rng);
        }
        (0..self.msgs.len())
            .map(|m| Times {
                start_us: self.start[m] as f64 / PS,
                tx_done_us: self.tx_done[m].unwrap_or(u64::MAX) as f64 / PS,
                rx_done_us: self.rx_done[m].unwrap_or(u64::MAX) as f64 / PS,
            })
            .collect()
    }

    fn push(&mut self, t: u64, ci: usize, s: usize) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, ci, s)));
    }

    /// Resource instance a stage's `k`-th hold refers to for message `m`.
    fn instance(&self, m: usize, s: usize, k: usize) -> usize {
        let r = self.pipe.stages[s].hold[k];
        let from = self.msgs[m].from;
        let owner = if self.pipe.resources[r].per_link || self.pipe.stages[s].side == Side::Tx {
            from
        } else {
            1 - from
        };
        r * 2 + owner
    }

    /// Time from which the chunk at the head of stage `s` may start, if known yet.
    fn eligible_at(&self, s: usize) -> Option<u64> {
        let ci = self.next[s];
        let c = self.chunks.get(ci)?;
        let mut at = if self.pipe.stages[s].branch {
            match self.branch_q[s].front() {
                Some(&(b, ready)) if b == ci => ready,
                _ => return None,
            }
        } else if c.stage == s {
            c.ready
        } else {
            return None;
        };
        if c.idx == 0 {
            let m = c.msg;
            let gate = |done: &Vec<Option<u64>>, k: Option<usize>| match k {
                Some(k) => done[k],
                None => Some(0),
            };
            if s == 0 {
                at = at.max(gate(&self.rx_done, self.msgs[m].after_rx_of)?);
                at = at.max(gate(&self.tx_done, self.msgs[m].after_tx_of)?);
            }
            if let Some(k) = self.pipe.in_flight {
                if s == self.pipe.nic_entry && m >= k {
                    at = at.max(self.tx_done[m - k]?);
                }
                if s == self.first_rx && m >= k {
                    at = at.max(self.rx_done[m - k]?);
                }
            }
        }
        (at <= self.now).then_some(at)
    }

    fn applies(&self, ci: usize, s: usize) -> bool {
        let c = &self.chunks[ci];
        match self.pipe.stages[s].every {
            Every::Chunk => true,
            Every::First => c.idx == 0,
            Every::Last => c.last,
        }
    }

    fn dispatch<R: Rng>(&mut self, rng: &mut R) {
        loop {
            let mut heads: Vec<(u64, usize, usize)> = (0..self.pipe.stages.len())
                .filter_map(|s| self.eligible_at(s).map(|at| (at, self.next[s], s)))
                .collect();
            if heads.is_empty() {
                return;
            }
            heads.sort_unstable();
            let mut claimed = self.busy.clone();
            let mut progressed = false;
            for (_, ci, s) in heads {
                let m = self.chunks[ci].msg;
                if !self.applies(ci, s) {
                    self.next[s] += 1;
                    if self.pipe.stages[s].branch {
                        self.branch_q[s].pop_front();
                    }
                    self.advance(ci, s, self.now);
                    progressed = true;
                    continue;
                }
                let inst: Vec<usize> = (0..self.pipe.stages[s].hold.len())
                    .map(|k| self.instance(m, s, k))
                    .collect();
                if inst.iter().any(|&i| claimed[i]) {
                    for &i in &inst {
                        claimed[i] = true;
                    }
                    continue;
                }
                for &i in &inst {
                    claimed[i] = true;
                    self.busy[i] = true;
                }
                if self.chunks[ci].idx == 0 {
                    if s == 0 {
                        self.start[m] = self.now;
                    }
                    if s == self.pipe.nic_entry {
                        self.active[0] += 1;
                    }
                    if s == self.first_rx {
                        self.active[1] += 1;
                    }
                }
                self.next[s] += 1;
                if self.pipe.stages[s].branch {
                    self.branch_q[s].pop_front();
                }
                let cost = self.cost(ci, s, rng);
                self.push(self.now + cost, ci, s);
            }
            if !progressed {
                return;
            }
        }
    }

    fn cost<R: Rng>(&self, ci: usize, s: usize, rng: &mut R) -> u64 {
        let stage = &self.pipe.stages[s];
        let c = &self.chunks[ci];
        let pages = c.bytes.div_ceil(self.pipe.page_bytes).max(1);
        let misses = if stage.per_page && stage.miss_us > 0.0 && self.pipe.tlb_hit_rate < 1.0 {
            (0..pages)
                .filter(|_| !rng.random_bool(self.pipe.tlb_hit_rate.clamp(0.0, 1.0)))
                .count() as u64
        } else {
            0
        };
        let side = usize::from(stage.side == Side::Rx);
        let contended = if self.active[side] > 1 {
            stage.contention_us
        } else {
            0.0
        };
        let us = contended
            + stage.cost_us(
            c.bytes,
            self.pipe.header_bytes,
            self.pipe.min_packet_bytes,
            pages,
            misses,
        );
        (us * PS).round() as u64
    }

    fn finish(&mut self, ci: usize, s: usize) {
        let m = self.chunks[ci].msg;
        for k in 0..self.pipe.stages[s].hold.len() {
            let i = self.instance(m, s, k);
            self.busy[i] = false;
        }
        self.advance(ci, s, self.now);
    }

    /// Chunk `ci` left stage `s` at `t`: record milestones, move it to the next stage.
    fn advance(&mut self, ci: usize, s: usize, t: u64) {
        let c = self.chunks[ci];
        if c.last && s == self.last_tx {
            self.tx_done[c.msg] = Some(t);
            self.active[0] = self.active[0].saturating_sub(1);
        }
        if c.last && s + 1 == self.pipe.stages.len() {
            self.rx_done[c.msg] = Some(t);
            self.active[1] = self.active[1].saturating_sub(1);
        }
        if self.pipe.stages[s].branch {
            return;
        }
        let delay = (self.pipe.stages[s].latency_us * PS).round() as u64;
        let mut n = s + 1;
        while n < self.pipe.stages.len() && self.pipe.stages[n].branch {
            self.branch_q[n].push_back((ci, t + delay));
            n += 1;
        }
        let chunk = &mut self.chunks[ci];
        chunk.stage = n;
        chunk.ready = t + delay;
        if delay > 0 {
            self.push(t + delay, ci, usize::MAX);
        }
    }
}
