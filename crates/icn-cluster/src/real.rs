//! The same programs run for real: one process per rank, messages over `icn-via` (shared
//! memory or TCP), so a simulated prediction and a measurement sit side by side
//! (`icnlab via run WORKLOAD`). This module is one rank's side; the binary starts the
//! processes and hands them each other's addresses.
//!
//! Per pair of ranks that exchange messages there is one VI. Ranks connect in a fixed order
//! that cannot deadlock: each rank first accepts its lower peers (in increasing order), then
//! connects to its higher peers (in increasing order). One receive buffer for *every* message
//! a peer will send is posted before the start signal, so an eager send always finds one
//! (VIA drops the connection on a send with no receive posted; re-posting consumed buffers
//! is not enough, since a send completes when it is placed, not when it is consumed). A
//! message's tag travels as the VIA immediate value; messages of one pair arrive in order,
//! and a receive takes the oldest arrived message of its (peer, tag), as in the simulator.
//!
//! Not supported for real runs (refused up front): `ssend`; more than [`MAX_PER_PAIR`]
//! messages from one rank to another, or receive buffers above [`MAX_BUFFER_BYTES`] per pair.

use crate::program::{Op, Program};
use icn_via::{
    Descriptor, MemAttributes, MemRegion, Nic, Reliability, Segment, Vi, ViAttributes, ViaError,
};
use std::collections::{BTreeSet, VecDeque};
use std::time::{Duration, Instant};

/// Messages one rank may send another in a real run (the VI's queue depth).
pub const MAX_PER_PAIR: usize = icn_via::attrs::MAX_QUEUE_DEPTH;
/// Receive buffer bytes one rank may post for one peer.
pub const MAX_BUFFER_BYTES: usize = 256 << 20;
/// Sends in flight per pair before the rank waits for the oldest to complete.
const SEND_DEPTH: usize = 32;
const CONNECT_TIMEOUT: Option<Duration> = Some(Duration::from_secs(20));
/// A receive that sees nothing for this long reports the peer as gone.
const STALL: Duration = Duration::from_secs(20);

/// Checks that `program` can run for real.
pub fn check(program: &Program) -> Result<(), String> {
    for from in 0..program.len() {
        for to in peers_of(program, from) {
            let (count, largest) = (
                messages(program, from, to),
                max_bytes(program, from, to).max(1),
            );
            if count > MAX_PER_PAIR || count.saturating_mul(largest) > MAX_BUFFER_BYTES {
                return Err(format!(
                    "rank {from} sends rank {to} {count} messages of up to {largest} B: a real run posts a \
                     buffer for each, at most {MAX_PER_PAIR} messages and {} MiB per pair",
                    MAX_BUFFER_BYTES >> 20
                ));
            }
        }
    }
    for (r, ops) in program.ranks.iter().enumerate() {
        if let Some((i, op)) = ops
            .iter()
            .enumerate()
            .find(|(_, op)| matches!(op, Op::Ssend { .. }))
        {
            return Err(format!(
                "rank {r} op {i} ({op}): ssend is not supported by real runs yet"
            ));
        }
        for op in ops {
            if let Op::Send { bytes, .. } | Op::Recv { bytes, .. } = op
                && *bytes > u64::from(icn_via::attrs::MAX_TRANSFER_SIZE)
            {
                return Err(format!(
                    "rank {r}: {op}: a real run moves at most {} B per message",
                    icn_via::attrs::MAX_TRANSFER_SIZE
                ));
            }
        }
    }
    Ok(())
}

/// Bytes of message buffers a real run of `program` registers over all its ranks together:
/// for every rank that sends another, the receiver's buffer for each of those messages and
/// the sender's one buffer, each the size of the pair's largest message
/// (`Σ largest × (messages + 1)` over ordered pairs; see [`Rank::connect`]). Every page is
/// touched before the start, so this is resident memory, held by all ranks at once.
pub fn buffer_bytes(program: &Program) -> u128 {
    let mut pairs: std::collections::HashMap<(usize, usize), (u128, u128)> =
        std::collections::HashMap::new();
    for (from, ops) in program.ranks.iter().enumerate() {
        for op in ops {
            if let Op::Send { peer, bytes, .. } = *op {
                let (count, largest) = pairs.entry((from, peer)).or_default();
                *count += 1;
                *largest = (*largest).max(u128::from(bytes.max(1)));
            }
        }
    }
    pairs
        .values()
        .map(|(count, largest)| largest * (count + 1))
        .sum()
}

/// One peer of this rank: its VI, buffers and arrived messages.
struct Peer {
    rank: usize,
    vi: Vi,
    rx: MemRegion,
    slot_bytes: usize,
    tx: MemRegion,
    sends_in_flight: usize,
    /// Arrived, unconsumed messages: (tag, bytes, slot).
    arrived: VecDeque<(u32, u64, usize)>,
}

/// A rank connected to its peers, ready to run.
pub struct Rank {
    me: usize,
    /// Kept open for the VIs' lifetime.
    _nic: Nic,
    peers: Vec<Peer>,
    /// The program is over: receive buffers flushed by a departing peer are expected.
    finishing: bool,
}

fn peers_of(program: &Program, me: usize) -> BTreeSet<usize> {
    let mut set = BTreeSet::new();
    for (r, ops) in program.ranks.iter().enumerate() {
        for op in ops {
            if let Op::Send { peer, .. } | Op::Recv { peer, .. } = *op {
                if r == me {
                    set.insert(peer);
                } else if peer == me {
                    set.insert(r);
                }
            }
        }
    }
    set
}

fn max_bytes(program: &Program, from: usize, to: usize) -> usize {
    program.ranks[from]
        .iter()
        .filter_map(|op| match *op {
            Op::Send { peer, bytes, .. } if peer == to => Some(bytes as usize),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// Messages `from` sends `to`.
fn messages(program: &Program, from: usize, to: usize) -> usize {
    program.ranks[from]
        .iter()
        .filter(|op| matches!(**op, Op::Send { peer, .. } if peer == to))
        .count()
}

fn discriminator(lower: usize) -> Vec<u8> {
    format!("icnlab-run-{lower}").into_bytes()
}

impl Rank {
    /// Opens this rank's NIC at `listen` (a provider URL); returns it with its address to
    /// publish.
    pub fn open(listen: &str) -> Result<Nic, ViaError> {
        Nic::open(listen)
    }

    /// Connects rank `me` to every peer it exchanges messages with (`urls[r]`: rank r's
    /// published address) and posts its receive buffers.
    pub fn connect(
        nic: Nic,
        program: &Program,
        me: usize,
        urls: &[String],
    ) -> Result<Rank, String> {
        let ptag = nic.create_ptag();
        let peers = peers_of(program, me);
        let mut out: Vec<Peer> = Vec::new();
        let name = |p: usize| format!("rank {me} ↔ rank {p} ({})", urls[p]);
        let ordered = peers
            .iter()
            .filter(|&&p| p < me)
            .chain(peers.iter().filter(|&&p| p > me));
        for &p in ordered {
            let slots = messages(program, p, me);
            let mut attrs = ViAttributes::new(ptag, Reliability::ReliableDelivery);
            attrs.queue_depth = slots.clamp(SEND_DEPTH, MAX_PER_PAIR);
            let vi = nic
                .create_vi(attrs, None, None)
                .map_err(|e| format!("{}: {e}", name(p)))?;
            let slot_bytes = max_bytes(program, p, me).max(1);
            let rx = nic
                .register_mem(slot_bytes * slots.max(1), MemAttributes::local(ptag))
                .map_err(|e| format!("{}: receive buffers: {e}", name(p)))?;
            let tx = nic
                .register_mem(max_bytes(program, me, p).max(1), MemAttributes::local(ptag))
                .map_err(|e| format!("{}: send buffer: {e}", name(p)))?;
            // Touch every page now, as any real application's buffers are resident: the
            // first write to a fresh page costs a fault that would be timed as messaging.
            rx.with_mut(|b| b.fill(0));
            tx.with_mut(|b| b.fill(0xa5));
            for slot in 0..slots {
                vi.post_recv(Descriptor::recv([Segment::new(
                    rx.handle(),
                    (slot * slot_bytes) as u64,
                    slot_bytes as u32,
                )]))
                .map_err(|e| format!("{}: post receive: {e}", name(p)))?;
            }
            if p < me {
                nic.connect_wait(&discriminator(p), CONNECT_TIMEOUT)
                    .and_then(|req| req.accept(&vi))
                    .map_err(|e| format!("{}: accept: {e}", name(p)))?;
            } else {
                nic.connect_request(&vi, &urls[p], &discriminator(me), CONNECT_TIMEOUT)
                    .map_err(|e| format!("{}: connect: {e}", name(p)))?;
            }
            out.push(Peer {
                rank: p,
                vi,
                rx,
                slot_bytes,
                tx,
                sends_in_flight: 0,
                arrived: VecDeque::new(),
            });
        }
        Ok(Rank {
            me,
            _nic: nic,
            peers: out,
            finishing: false,
        })
    }

    fn peer(&self, rank: usize) -> usize {
        self.peers
            .iter()
            .position(|p| p.rank == rank)
            .expect("connected to every peer of the program")
    }

    /// Takes every completed receive of every VI into its peer's arrived list.
    fn progress(&mut self) -> Result<bool, String> {
        let mut any = false;
        let me = self.me;
        for p in &mut self.peers {
            while let Some(c) = p.vi.recv_done() {
                if self.finishing && !c.status.is_ok() {
                    continue;
                }
                let c = c
                    .ok()
                    .map_err(|e| format!("rank {me}: receive from rank {}: {e}", p.rank))?;
                let slot = c
                    .desc
                    .segments
                    .first()
                    .map_or(0, |s| s.offset as usize / p.slot_bytes);
                p.arrived
                    .push_back((c.immediate.unwrap_or(0), u64::from(c.length), slot));
                any = true;
            }
            while p.sends_in_flight > 0
                && let Some(c) = p.vi.send_done()
            {
                c.ok()
                    .map_err(|e| format!("rank {me}: send to rank {}: {e}", p.rank))?;
                p.sends_in_flight -= 1;
                any = true;
            }
        }
        Ok(any)
    }

    /// Sends every acknowledgement owed: acks ride on outgoing frames or go out when a VI
    /// blocks, and a rank polling for a message from one peer would otherwise hold back the
    /// acks another peer's sends are waiting for.
    fn flush_acks(&self) {
        for p in &self.peers {
            p.vi.progress();
        }
    }

    /// Runs this rank's operations; returns the time from `start` to the end.
    pub fn run(&mut self, program: &Program, start: Instant) -> Result<Duration, String> {
        let me = self.me;
        for (i, &op) in program.ranks[me].iter().enumerate() {
            let at = |why: String| format!("rank {me} op {i} ({op}): {why}");
            match op {
                Op::Compute { ns } => {
                    let until = Instant::now() + Duration::from_nanos(ns);
                    if ns > 100_000 {
                        std::thread::sleep(Duration::from_nanos(ns - 50_000));
                    }
                    while Instant::now() < until {
                        self.progress()?;
                    }
                }
                Op::Send { peer, bytes, tag } => {
                    let k = self.peer(peer);
                    while self.peers[k].sends_in_flight >= SEND_DEPTH {
                        let p = &mut self.peers[k];
                        p.vi.send_wait(Some(STALL))
                            .and_then(|c| c.ok())
                            .map_err(|e| at(format!("peer gone? {e}")))?;
                        p.sends_in_flight -= 1;
                    }
                    let p = &mut self.peers[k];
                    p.vi.post_send(
                        Descriptor::send([Segment::new(p.tx.handle(), 0, bytes as u32)])
                            .with_immediate(tag),
                    )
                    .map_err(|e| at(e.to_string()))?;
                    p.sends_in_flight += 1;
                }
                Op::Recv { peer, bytes, tag } => {
                    let k = self.peer(peer);
                    let waited = Instant::now();
                    let mut idle = 0u32;
                    loop {
                        let p = &mut self.peers[k];
                        if let Some(j) = p.arrived.iter().position(|a| a.0 == tag) {
                            let (_, len, slot) = p.arrived.remove(j).expect("found");
                            if len > bytes {
                                return Err(at(format!("the message has {len} B (truncated)")));
                            }
                            let sb = p.slot_bytes;
                            p.vi.post_recv(Descriptor::recv([Segment::new(
                                p.rx.handle(),
                                (slot * sb) as u64,
                                sb as u32,
                            )]))
                            .map_err(|e| at(e.to_string()))?;
                            break;
                        }
                        if !self.progress()? {
                            self.flush_acks();
                            idle += 1;
                            if idle.is_multiple_of(64) {
                                // More ranks than cores: let the peer we wait for run.
                                std::thread::yield_now();
                            }
                            if waited.elapsed() > STALL {
                                return Err(at(format!(
                                    "nothing arrived for {} s: peer rank {peer} gone or stuck",
                                    STALL.as_secs()
                                )));
                            }
                            std::hint::spin_loop();
                        }
                    }
                }
                Op::Ssend { .. } => return Err(at("ssend is not supported by real runs".into())),
            }
        }
        Ok(start.elapsed())
    }

    /// Keeps every VI moving (acknowledgements out, completions in) after the program:
    /// calls `settled` once this rank's own sends are complete, and returns when `exit`
    /// says every rank has settled (a peer may need our acknowledgement until then).
    pub fn settle(mut self, settled: impl FnOnce(), exit: impl Fn() -> bool) -> Result<(), String> {
        let me = self.me;
        self.finishing = true;
        let mut settled = Some(settled);
        let mut idle_since = Instant::now();
        loop {
            if self.progress()? {
                idle_since = Instant::now();
            }
            self.flush_acks();
            if !self.peers.iter().any(|p| p.sends_in_flight > 0)
                && let Some(f) = settled.take()
            {
                f();
            }
            if settled.is_none() && exit() {
                return Ok(());
            }
            if idle_since.elapsed() > STALL {
                return Err(format!(
                    "rank {me}: no progress for {} s while finishing: a peer is gone",
                    STALL.as_secs()
                ));
            }
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alltoall(ranks: usize, bytes: u64) -> Program {
        let mut p = Program::new(ranks);
        for from in 0..ranks {
            for to in (0..ranks).filter(|&t| t != from) {
                p.send(from, to, bytes, 0);
                p.recv(to, from, bytes, 0);
            }
        }
        p
    }

    /// Issue 22: path:8 × 256 MiB alltoall passed `check` and needed tens of GB over its
    /// ranks. 56 ordered pairs, each one 256 MiB receive buffer and one 256 MiB send buffer.
    #[test]
    fn buffers_are_counted_over_every_rank() {
        assert_eq!(buffer_bytes(&alltoall(8, 256 << 20)), 56 * 2 * (256 << 20));
        let mut p = Program::new(2);
        for b in [10, 30, 20] {
            p.send(0, 1, b, 0);
            p.recv(1, 0, b, 0);
        }
        // Three receive slots and one send buffer of the largest message; nothing back.
        assert_eq!(buffer_bytes(&p), 30 * 4);
    }

    /// A rank handed only its view of the program posts the same buffers and peers as with
    /// the whole program (`via run` sends each rank its view).
    #[test]
    fn a_ranks_view_holds_what_it_connects_with() {
        let mut p = alltoall(4, 64);
        p.send(2, 3, 4096, 9);
        p.recv(3, 2, 4096, 9);
        p.ranks[1].push(Op::Compute { ns: 5 });
        for me in 0..4 {
            let v = p.view(me);
            assert_eq!(v.len(), 4);
            assert_eq!(v.ranks[me], p.ranks[me]);
            assert_eq!(peers_of(&v, me), peers_of(&p, me));
            for peer in 0..4 {
                assert_eq!(messages(&v, peer, me), messages(&p, peer, me));
                assert_eq!(max_bytes(&v, peer, me), max_bytes(&p, peer, me));
                assert_eq!(max_bytes(&v, me, peer), max_bytes(&p, me, peer));
            }
            let text = v.to_trace();
            assert_eq!(crate::program::parse_trace(&text, "view").unwrap(), v);
        }
        // Rank 0's view: its own 6 operations and the 2 of each other rank naming it; none
        // of rank 1's compute or of the 2 → 3 messages.
        assert_eq!(p.view(0).ops(), 6 + 3 * 2);
    }
}
