//! The event queue over resources: packets of messages flowing through a [`Pipeline`].
//!
//! A message is cut into chunks of at most `chunk_bytes` (one DMA each) and every chunk into
//! packets of at most `packet_bytes` (wire packets). The packet is the unit that moves: a
//! stage's per-DMA costs are paid by the first packet of its chunk (see
//! [`crate::design::Stage::cost_us`]), so a long DMA streams onto the wire instead of being
//! stored and forwarded whole. Below, "chunk" in the rules means that unit.
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
//! 6. If the event queue empties while a message is still undelivered (messages that wait for
//!    each other), the run ends with a [`Stall`] error rather than hanging or making up times.
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

/// The event queue emptied before every message was delivered: the messages' dependencies
/// (or the pipeline) can never let the remaining ones proceed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stall {
    /// Simulated time of the last event, ps.
    pub at_ps: u64,
    /// First message not delivered.
    pub message: usize,
    /// Messages delivered before the stall.
    pub delivered: usize,
}

impl std::fmt::Display for Stall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "simulation stalled at {:.3} µs: message {} can never be delivered \
             ({} delivered); check the messages' after_rx_of / after_tx_of dependencies",
            self.at_ps as f64 / PS,
            self.message,
            self.delivered
        )
    }
}

impl std::error::Error for Stall {}

impl From<Stall> for icn_engine::Invalid {
    fn from(s: Stall) -> Self {
        icn_engine::Invalid::new("simulation", s.to_string())
    }
}

/// One packet: the unit that moves through the stages.
#[derive(Clone, Copy, Debug, Default)]
struct Chunk {
    msg: usize,
    /// Packet index within the message (0 = first).
    idx: usize,
    /// First packet of its chunk (DMA): pays the stages' per-DMA costs.
    chunk_first: bool,
    /// Pages spanned by its chunk (NIC TLB lookups per DMA).
    chunk_pages: u64,
    last: bool,
    bytes: u64,
    /// Stage the chunk waits for or occupies; `stages.len()` when done.
    stage: usize,
    ready: u64,
}

/// Runs `messages` through `pipe`; `rng` draws NIC TLB misses.
pub fn run<R: Rng>(
    pipe: &Pipeline,
    messages: &[Message],
    rng: &mut R,
) -> Result<Vec<Times>, Stall> {
    Sim::new(pipe, messages).run(rng)
}

/// Packets a message of `bytes` is cut into on `pipe` (at least one).
pub fn packets(pipe: &Pipeline, bytes: u64) -> u64 {
    split(pipe, bytes).count() as u64
}

/// One packet of a message as [`split`] cuts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub bytes: u64,
    /// First packet of its chunk (DMA).
    pub chunk_first: bool,
    /// Pages its chunk spans.
    pub chunk_pages: u64,
}

/// Cuts a message of `bytes` into chunks of at most `chunk_bytes` (one DMA each) and those
/// into packets of at most `packet_bytes`, in order; an empty message is one empty packet.
pub fn split(pipe: &Pipeline, bytes: u64) -> impl Iterator<Item = Piece> + '_ {
    let chunk_max = pipe.chunk_bytes.max(1);
    let packet_max = pipe.packet_bytes.clamp(1, chunk_max);
    let chunks = bytes.div_ceil(chunk_max).max(1);
    (0..chunks).flat_map(move |k| {
        let chunk = (bytes - k * chunk_max).min(chunk_max);
        let chunk_pages = chunk.div_ceil(pipe.page_bytes).max(1);
        let packets = chunk.div_ceil(packet_max).max(1);
        (0..packets).map(move |j| Piece {
            bytes: (chunk - j * packet_max).min(packet_max),
            chunk_first: j == 0,
            chunk_pages,
        })
    })
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
            let first = chunks.len();
            for piece in split(pipe, msg.bytes) {
                chunks.push(Chunk {
                    msg: m,
                    idx: chunks.len() - first,
                    chunk_first: piece.chunk_first,
                    chunk_pages: piece.chunk_pages,
                    last: false,
                    bytes: piece.bytes,
                    stage: 0,
                    ready: 0,
                });
            }
            if let Some(c) = chunks.last_mut() {
                c.last = true;
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

    fn run<R: Rng>(mut self, rng: &mut R) -> Result<Vec<Times>, Stall> {
        self.dispatch(rng);
        while let Some(Reverse((t, _, ci, s))) = self.heap.pop() {
            self.now = t;
            if s != usize::MAX {
                self.finish(ci, s);
            }
            self.dispatch(rng);
        }
        let undone = |m: usize| self.rx_done[m].is_none() || self.tx_done[m].is_none();
        if let Some(message) = (0..self.msgs.len()).find(|&m| undone(m)) {
            return Err(Stall {
                at_ps: self.now,
                message,
                delivered: self.rx_done.iter().filter(|d| d.is_some()).count(),
            });
        }
        Ok((0..self.msgs.len())
            .map(|m| Times {
                start_us: self.start[m] as f64 / PS,
                tx_done_us: self.tx_done[m].unwrap_or(0) as f64 / PS,
                rx_done_us: self.rx_done[m].unwrap_or(0) as f64 / PS,
            })
            .collect())
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
        let pays = stage.pays_fixed(c.chunk_first);
        let pages = c.chunk_pages;
        let misses =
            if pays && stage.per_page && stage.miss_us > 0.0 && self.pipe.tlb_hit_rate < 1.0 {
                (0..pages)
                    .filter(|_| !rng.random_bool(self.pipe.tlb_hit_rate.clamp(0.0, 1.0)))
                    .count() as u64
            } else {
                0
            };
        let side = usize::from(stage.side == Side::Rx);
        let contended = if pays && self.active[side] > 1 {
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
                c.chunk_first,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::{ResourceRef, Stage, StageBytes};
    use icn_engine::rng::stream;

    fn res(n: usize) -> Vec<ResourceRef> {
        (0..n)
            .map(|i| ResourceRef {
                name: format!("r{i}"),
                per_link: false,
            })
            .collect()
    }

    fn stage(hold: &[usize], fixed_us: f64, rate: Option<f64>) -> Stage {
        Stage {
            name: "s".into(),
            side: Side::Tx,
            hold: hold.to_vec(),
            every: Every::Chunk,
            fixed_us,
            per_page: false,
            per_packet: false,
            miss_us: 0.0,
            bytes: if rate.is_some() {
                StageBytes::Chunk
            } else {
                StageBytes::None
            },
            rate,
            latency_us: 0.0,
            branch: false,
            contention_us: 0.0,
        }
    }

    fn pipe(resources: usize, stages: Vec<Stage>) -> Pipeline {
        Pipeline {
            resources: res(resources),
            stages,
            chunk_bytes: 1 << 20,
            packet_bytes: 1 << 20,
            header_bytes: 0,
            min_packet_bytes: 0,
            page_bytes: 4096,
            in_flight: None,
            nic_entry: 0,
            tlb_hit_rate: 1.0,
        }
    }

    fn stream_of(n: usize, bytes: u64) -> Vec<Message> {
        (0..n)
            .map(|_| Message {
                bytes,
                from: 0,
                after_rx_of: None,
                after_tx_of: None,
            })
            .collect()
    }

    fn done(p: &Pipeline, msgs: &[Message]) -> Vec<f64> {
        run(p, msgs, &mut stream(1, 0))
            .unwrap()
            .iter()
            .map(|t| t.rx_done_us)
            .collect()
    }

    #[test]
    fn one_stage_serves_messages_back_to_back() {
        // 1 µs + 1000 B / 100 MB/s = 11 µs each.
        let p = pipe(1, vec![stage(&[0], 1.0, Some(100.0))]);
        assert_eq!(done(&p, &stream_of(3, 1000)), vec![11.0, 22.0, 33.0]);
    }

    #[test]
    fn two_stages_on_two_resources_overlap() {
        // A = 2 µs, B = 3 µs: B is the bottleneck, first message out at 5, then every 3.
        let p = pipe(2, vec![stage(&[0], 2.0, None), stage(&[1], 3.0, None)]);
        assert_eq!(done(&p, &stream_of(3, 8)), vec![5.0, 8.0, 11.0]);
    }

    #[test]
    fn two_stages_sharing_a_resource_serialise_in_ready_order() {
        // Both stages hold r0. All A's are ready at 0, earlier than any B, so FIFO serves
        // A0 0-2, A1 2-4, A2 4-6, then B0 6-9, B1 9-12, B2 12-15.
        let p = pipe(1, vec![stage(&[0], 2.0, None), stage(&[0], 3.0, None)]);
        assert_eq!(done(&p, &stream_of(3, 8)), vec![9.0, 12.0, 15.0]);
    }

    #[test]
    fn in_flight_one_forbids_overlap() {
        let mut p = pipe(2, vec![stage(&[0], 2.0, None), stage(&[1], 3.0, None)]);
        p.in_flight = Some(1);
        assert_eq!(done(&p, &stream_of(3, 8)), vec![5.0, 10.0, 15.0]);
    }

    #[test]
    fn chunks_pipeline_within_a_message_and_latency_is_a_pure_delay() {
        // 3000 B in 1000-B chunks; A = 1000/500 = 2 µs per chunk on r0, then a 0.5 µs delay,
        // B = 1000/250 = 4 µs per chunk on r1. B starts at 2.5 and runs 3 chunks back to back.
        let mut a = stage(&[0], 0.0, Some(500.0));
        a.latency_us = 0.5;
        let mut p = pipe(2, vec![a, stage(&[1], 0.0, Some(250.0))]);
        p.chunk_bytes = 1000;
        p.packet_bytes = 1000;
        assert_eq!(done(&p, &stream_of(1, 3000)), vec![14.5]);
    }

    #[test]
    fn first_and_last_stages_apply_once_per_message() {
        // Descriptor (first, 1 µs), data per chunk (2 µs), status (last, 1 µs), one resource
        // each: chunks 0,1 data at 1-3, 3-5; status 5-6.
        let mut d = stage(&[0], 1.0, None);
        d.every = Every::First;
        let mut s = stage(&[2], 1.0, None);
        s.every = Every::Last;
        let mut p = pipe(3, vec![d, stage(&[1], 2.0, None), s]);
        p.chunk_bytes = 4;
        p.packet_bytes = 4;
        assert_eq!(done(&p, &stream_of(1, 8)), vec![6.0]);
    }

    #[test]
    fn pingpong_alternates_nodes() {
        // tx stage 2 µs on the sender's r0, rx stage 3 µs on the receiver's r1: 5 µs each way.
        let mut rx = stage(&[1], 3.0, None);
        rx.side = Side::Rx;
        let p = pipe(2, vec![stage(&[0], 2.0, None), rx]);
        let msgs: Vec<Message> = (0..4)
            .map(|m| Message {
                bytes: 4,
                from: m % 2,
                after_rx_of: m.checked_sub(1),
                after_tx_of: None,
            })
            .collect();
        assert_eq!(done(&p, &msgs), vec![5.0, 10.0, 15.0, 20.0]);
    }

    #[test]
    fn branch_stage_does_not_delay_delivery() {
        // A 1 µs, then a 10 µs status branch on r1 and a 2 µs delivery stage on r2.
        let mut b = stage(&[1], 10.0, None);
        b.branch = true;
        let mut rx = stage(&[2], 2.0, None);
        rx.side = Side::Rx;
        let p = pipe(3, vec![stage(&[0], 1.0, None), b, rx]);
        let t = run(&p, &stream_of(1, 4), &mut stream(1, 0)).unwrap();
        assert_eq!(t[0].rx_done_us, 3.0);
        assert_eq!(t[0].tx_done_us, 11.0);
    }

    #[test]
    fn contention_is_paid_only_with_overlapping_messages() {
        let mut a = stage(&[0], 1.0, None);
        a.contention_us = 4.0;
        let p = pipe(2, vec![a, stage(&[1], 1.0, None)]);
        // Alone: 2 µs. Three in a row: m0 starts alone (1 µs), m1 and m2 pay 5 µs each.
        assert_eq!(done(&p, &stream_of(1, 4)), vec![2.0]);
        assert_eq!(done(&p, &stream_of(3, 4)), vec![2.0, 7.0, 12.0]);
    }

    #[test]
    fn same_seed_same_result_and_misses_depend_on_the_seed() {
        let mut t = stage(&[0], 0.1, None);
        t.per_page = true;
        t.miss_us = 10.0;
        let mut p = pipe(2, vec![t, stage(&[1], 1.0, Some(100.0))]);
        p.tlb_hit_rate = 0.5;
        let msgs = stream_of(50, 16384);
        let a = run(&p, &msgs, &mut stream(7, 0)).unwrap();
        let b = run(&p, &msgs, &mut stream(7, 0)).unwrap();
        let c = run(&p, &msgs, &mut stream(8, 0)).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn packets_of_one_dma_stream_through_the_pipeline() {
        // One 3000-B message, one 3000-B DMA, 1000-B packets (3 packets).
        //   fetch (r0): 1 µs per DMA + 1000 B / 500 MB/s = 2 µs per packet → 3, 5, 7 µs
        //   wire  (r1): 0.25 µs header per packet (per_packet) + 1000 B / 250 = 4 µs,
        //               then a 0.5 µs pure delay
        //   deliver (r2, rx): 1000 B / 1000 MB/s = 1 µs per packet
        // wire: p0 3-7.25, p1 7.25-11.5, p2 11.5-15.75; deliver: p0 7.75-8.75, p1 12-13,
        // p2 16.25-17.25. As one packet (store and forward): 7 + 12.25 + 0.5 + 3 = 22.75.
        let mut fetch = stage(&[0], 1.0, Some(500.0));
        fetch.every = Every::Chunk;
        let mut wire = stage(&[1], 0.25, Some(250.0));
        wire.per_packet = true;
        wire.latency_us = 0.5;
        let mut deliver = stage(&[2], 0.0, Some(1000.0));
        deliver.side = Side::Rx;
        let mut p = pipe(3, vec![fetch, wire, deliver]);
        p.chunk_bytes = 3000;
        p.packet_bytes = 1000;
        assert_eq!(packets(&p, 3000), 3);
        let t = run(&p, &stream_of(1, 3000), &mut stream(1, 0)).unwrap();
        assert_eq!((t[0].rx_done_us * PS).round() as u64, 17_250_000);
        assert_eq!((t[0].tx_done_us * PS).round() as u64, 15_750_000);
        p.packet_bytes = 3000;
        let whole = run(&p, &stream_of(1, 3000), &mut stream(1, 0)).unwrap();
        assert_eq!((whole[0].rx_done_us * PS).round() as u64, 22_750_000);
    }

    #[test]
    fn per_dma_costs_are_paid_once_per_chunk() {
        // 8000 B = chunks of 4000 + 4000, packets of 1000: 8 packets, 2 chunk starts.
        // One stage: 10 µs per DMA + 1 µs per packet (bytes at 1000 MB/s): 2 × 10 + 8 × 1.
        let p = {
            let mut p = pipe(
                2,
                vec![stage(&[0], 10.0, Some(1000.0)), {
                    let mut rx = stage(&[1], 0.0, None);
                    rx.side = Side::Rx;
                    rx
                }],
            );
            p.chunk_bytes = 4000;
            p.packet_bytes = 1000;
            p
        };
        assert_eq!(packets(&p, 8000), 8);
        assert_eq!(packets(&p, 8001), 9);
        assert_eq!(done(&p, &stream_of(1, 8000)), vec![28.0]);
        // The same stage marked per_packet pays its 10 µs on all 8 packets.
        let mut q = p.clone();
        q.stages[0].per_packet = true;
        assert_eq!(done(&q, &stream_of(1, 8000)), vec![88.0]);
    }

    #[test]
    fn messages_waiting_for_each_other_stall_with_an_error() {
        let p = pipe(
            2,
            vec![stage(&[0], 1.0, None), {
                let mut rx = stage(&[1], 1.0, None);
                rx.side = Side::Rx;
                rx
            }],
        );
        // Message 0 is free; 1 and 2 each wait for the other's arrival.
        let msgs = [
            Message {
                bytes: 8,
                from: 0,
                after_rx_of: None,
                after_tx_of: None,
            },
            Message {
                bytes: 8,
                from: 1,
                after_rx_of: Some(2),
                after_tx_of: None,
            },
            Message {
                bytes: 8,
                from: 0,
                after_rx_of: Some(1),
                after_tx_of: None,
            },
        ];
        let e = run(&p, &msgs, &mut stream(1, 0)).unwrap_err();
        assert_eq!(
            e,
            Stall {
                at_ps: 2_000_000,
                message: 1,
                delivered: 1
            }
        );
        assert!(e.to_string().contains("message 1"), "{e}");
    }
}
