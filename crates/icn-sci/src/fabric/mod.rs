//! SCI networks behind the [`icn_fabric::Fabric`] interface, for the cluster simulator and
//! the open-loop harness: one ring ([`ring`], kind `sci-ring`, `model = "sci"`'s ring) and
//! rings joined by switches ([`switched`], kind `sci-switched`, `model = "sci-switched"`'s
//! system). Each kind's `[fabric]` keys are its model's network keys, read by the model's
//! own config struct ([`keys`]).
//!
//! Both are an [`SciFabric`]: this module is the endpoint side they share, over an
//! [`SciNetwork`] (the ring simulator, or the switched system) that is driven externally —
//! its own traffic generators unused. A fabric packet is one SCI send of the network's
//! largest configured data size (`data_bytes`, 16/64/256 B): the endpoint cuts messages to
//! [`Fabric::max_packet_bytes`]. A packet enters its source host's send queue
//! (`send_queue_depth` sends) when there is room. A NIC uses [`Fabric::try_inject`], which
//! the full queue refuses (rule 4: the NIC holds its DMA); the open-loop [`Fabric::inject`]
//! keeps an unbounded queue in front of it, so nothing is dropped. A send travels with the
//! full send/echo protocol — A/B aging or intelligent A/B aging, retries after BUSY, and on
//! a switched system every ring hop and switch queue — and is delivered when the last
//! symbol of the send its final target accepted has arrived (the target decides at the
//! header; the tail follows `symbols − 1` cycles later). Time: one cycle = one 16-bit
//! symbol = 2 ns.
//!
//! SCI retries can reorder two sends of one pair (a BUSY-echoed send retries after a later
//! one was accepted). The fabric interface does not promise order per pair, but a messaging
//! layer on SCI provides it, so this fabric keeps it: deliveries are resequenced per pair,
//! and a send accepted early is delivered when its predecessors have been.

pub mod keys;
pub mod ring;
pub mod switched;

pub use ring::{SciRingFabric, SciRingFabricConfig};
pub use switched::{SciSwitchedFabric, SciSwitchedFabricConfig};

use crate::ring::sim::Outbox;
use icn_engine::Invalid;
use icn_fabric::zero_load::Probe;
use icn_fabric::{
    ChannelLoad, Delivery, Fabric, FabricError, Nouns, Packet, Ps, Refused, ZeroLoad,
};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};

/// One SCI cycle, ps.
pub const CYCLE_PS: Ps = 2_000;

/// Cycles without a delivery, while sends are in flight, after which the network counts as
/// stuck (4 ms of ring time: a 64-node ring with every node retrying into one target
/// accepts a send every few hundred cycles).
pub const WATCHDOG: u64 = 2_000_000;

/// An SCI network driven from outside, cycle by cycle: what [`SciFabric`] needs of the ring
/// simulator or of the switched system.
pub trait SciNetwork {
    /// Hosts (the fabric's endpoints).
    fn hosts(&self) -> usize;
    /// Cycles simulated so far.
    fn cycle(&self) -> u64;
    /// Queues send `seq` (of data size class `size_class`) from host `src` to host `dst`
    /// in `src`'s send queue; false, with nothing changed, when that queue is full.
    fn offer(&mut self, src: usize, dst: usize, size_class: u8, seq: u64) -> bool;
    /// Sends in host `src`'s send queue.
    fn queued(&self, src: usize) -> usize;
    /// Sends a host's send queue holds at most.
    fn queue_depth(&self) -> usize;
    /// Simulates one cycle, appending what it reports (each send its final target accepted
    /// in it is an [`Outbox::Accepted`]); an invariant violation is an error.
    fn step(&mut self, outbox: &mut Vec<Outbox>) -> Result<(), String>;
    /// Whether an idle cycle changes nothing but the clock (and the SAT's place).
    fn settled(&self) -> bool;
    /// Advances a [settled](SciNetwork::settled) network by `cycles`, exactly as stepping.
    fn skip_settled(&mut self, cycles: u64);
    /// What is stuck where.
    fn diagnose(&self) -> String;
    /// The pairs a lone send cannot tell apart share a class (a ring: the distance).
    fn route_class(&self, src: usize, dst: usize) -> (usize, usize);
}

struct InFlight {
    packet: Packet,
    injected: Ps,
    /// Index of this packet among its pair's packets.
    pair_index: u64,
}

/// How a fresh copy of the network is built, for [`Fabric::zero_load`].
type Fresh<N> = std::sync::Arc<dyn Fn() -> Result<N, Invalid> + Send + Sync>;

/// See the module documentation.
pub struct SciFabric<N: SciNetwork> {
    net: N,
    n: usize,
    size_class: u8,
    max_bytes: u32,
    /// Per source: packets waiting for room in the network's send queue.
    waiting: Vec<VecDeque<u64>>,
    packets: HashMap<u64, InFlight>,
    next_seq: u64,
    /// Per pair: packets injected, and the next index to deliver.
    pair_injected: HashMap<(usize, usize), u64>,
    pair_next: HashMap<(usize, usize), u64>,
    /// Per pair: accepted early, waiting for a predecessor (by pair index).
    held: HashMap<(usize, usize), BTreeMap<u64, u64>>,
    outbox: Vec<Outbox>,
    /// Accepted sends whose tail is still arriving, by the cycle it has arrived.
    landing: BinaryHeap<Reverse<(u64, u64)>>,
    accepted: Vec<u64>,
    measuring: bool,
    /// Cycle of the last delivery (or of the first injection after an idle spell).
    last_progress: u64,
    /// What a fresh copy is built from, for [`Fabric::zero_load`].
    fresh: Fresh<N>,
    probe: Probe<(usize, usize)>,
    nouns: Nouns,
}

impl<N: SciNetwork + 'static> SciFabric<N> {
    /// The fabric over `fresh()`, whose packets are sends of data size class `size_class`
    /// (`max_bytes` of data).
    fn over(
        fresh: Fresh<N>,
        size_class: u8,
        max_bytes: u32,
        router: &'static str,
    ) -> Result<Self, Invalid> {
        let net = fresh()?;
        let n = net.hosts();
        Ok(SciFabric {
            net,
            n,
            size_class,
            max_bytes: max_bytes.max(1),
            waiting: vec![VecDeque::new(); n],
            packets: HashMap::new(),
            next_seq: 0,
            pair_injected: HashMap::new(),
            pair_next: HashMap::new(),
            held: HashMap::new(),
            outbox: Vec::new(),
            landing: BinaryHeap::new(),
            accepted: vec![0; n],
            measuring: false,
            last_progress: 0,
            fresh,
            // An idle network's state does not change with time (`skip_settled` jumps), so
            // a lone send's timing does not depend on the cycle it starts in.
            probe: Probe::new(1),
            nouns: Nouns {
                item: "send",
                size_unit: "B",
                router,
                latency_about: "send creation → accepted by its target (all retries)",
            },
        })
    }

    /// The network (the ring simulator, or the switched system).
    pub fn network(&self) -> &N {
        &self.net
    }

    /// [`Fabric::skip_idle`], returning the cycles it had to step before the network
    /// settled.
    pub fn skip_idle_counted(&mut self, to: Ps) -> Result<u64, FabricError> {
        let target = to.div_ceil(CYCLE_PS);
        let mut stepped = 0;
        let mut none = Vec::new();
        while self.net.cycle() < target {
            if self.packets.is_empty() && self.net.settled() {
                self.net.skip_settled(target - self.net.cycle());
                break;
            }
            self.advance((self.net.cycle() + 1) * CYCLE_PS, &mut none)?;
            stepped += 1;
        }
        debug_assert!(none.is_empty(), "nothing in flight, nothing delivered");
        Ok(stepped)
    }

    /// Moves waiting packets into the send queues while they have room.
    fn feed(&mut self) {
        for src in 0..self.n {
            self.feed_one(src);
        }
    }

    /// Moves `src`'s waiting packets into its send queue while it has room.
    fn feed_one(&mut self, src: usize) {
        while let Some(&seq) = self.waiting[src].front() {
            let dst = self.packets[&seq].packet.dst;
            if !self.net.offer(src, dst, self.size_class, seq) {
                break;
            }
            self.waiting[src].pop_front();
        }
    }

    /// Delivers `seq` (its tail arrived at `at`) if it is its pair's next, then any
    /// successors that arrived early; otherwise holds it.
    fn resequence(&mut self, seq: u64, at: Ps, out: &mut Vec<Delivery>) {
        let f = &self.packets[&seq];
        let pair = (f.packet.src, f.packet.dst);
        let next = self.pair_next.entry(pair).or_insert(0);
        if f.pair_index != *next {
            self.held.entry(pair).or_default().insert(f.pair_index, seq);
            return;
        }
        *next += 1;
        self.deliver(seq, at, out);
        loop {
            let next = self.pair_next[&pair];
            let Some(seq) = self.held.get_mut(&pair).and_then(|h| h.remove(&next)) else {
                break;
            };
            *self.pair_next.get_mut(&pair).expect("set above") += 1;
            self.deliver(seq, at, out);
        }
    }

    fn deliver(&mut self, seq: u64, now: Ps, out: &mut Vec<Delivery>) {
        self.last_progress = now / CYCLE_PS;
        let f = self
            .packets
            .remove(&seq)
            .expect("accepted packet is in flight");
        if self.measuring {
            self.accepted[f.packet.src] += u64::from(f.packet.bytes);
        }
        out.push(Delivery {
            packet: f.packet,
            injected: f.injected,
            delivered: now,
        });
    }
}

impl<N: SciNetwork + 'static> Fabric for SciFabric<N> {
    fn endpoints(&self) -> usize {
        self.n
    }

    fn cycle_ps(&self) -> Ps {
        CYCLE_PS
    }

    fn now(&self) -> Ps {
        self.net.cycle() * CYCLE_PS
    }

    fn max_packet_bytes(&self) -> u32 {
        self.max_bytes
    }

    fn inject(&mut self, p: Packet) {
        if self.packets.is_empty() {
            self.last_progress = self.net.cycle();
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let k = self.pair_injected.entry((p.src, p.dst)).or_insert(0);
        let pair_index = *k;
        *k += 1;
        self.packets.insert(
            seq,
            InFlight {
                packet: p,
                injected: self.now(),
                pair_index,
            },
        );
        self.waiting[p.src].push_back(seq);
    }

    /// A host's send queue (`send_queue_depth` sends).
    fn input_capacity(&self) -> Option<usize> {
        Some(self.net.queue_depth())
    }

    /// Sends in the host's send queue, and any the unbounded [`Fabric::inject`] keeps
    /// waiting in front of it.
    fn input_queued(&self, src: usize) -> usize {
        self.waiting[src].len() + self.net.queued(src)
    }

    /// Straight into the host's send queue, now (as the next cycle's feed would have).
    fn try_inject(&mut self, p: Packet) -> Result<(), Refused> {
        if !self.can_inject(p.src) {
            return Err(Refused(p));
        }
        self.inject(p);
        self.feed_one(p.src);
        Ok(())
    }

    fn advance(&mut self, until: Ps, out: &mut Vec<Delivery>) -> Result<(), FabricError> {
        while self.now() < until {
            self.feed();
            let cycle = self.net.cycle();
            self.net
                .step(&mut self.outbox)
                .map_err(|f| FabricError::Failed(format!("SCI: {f}")))?;
            if !self.packets.is_empty() && cycle > self.last_progress + WATCHDOG {
                return Err(FabricError::Deadlock(format!(
                    "SCI: no send delivered for {WATCHDOG} cycles with {} in flight; {}",
                    self.packets.len(),
                    self.net.diagnose()
                )));
            }
            for o in self.outbox.drain(..) {
                if let Outbox::Accepted { seq, symbols, .. } = o {
                    self.landing
                        .push(Reverse((cycle + u64::from(symbols) - 1, seq)));
                }
            }
            while let Some(&Reverse((tail, seq))) = self.landing.peek() {
                if tail > cycle {
                    break;
                }
                self.landing.pop();
                self.resequence(seq, tail * CYCLE_PS, out);
            }
        }
        Ok(())
    }

    /// Measured on a fresh copy ([`Probe`]).
    fn zero_load(&mut self, src: usize, dst: usize, bytes: u32) -> Result<ZeroLoad, FabricError> {
        let class = self.net.route_class(src, dst);
        let (fresh, size_class, max_bytes, router) = (
            &self.fresh,
            self.size_class,
            self.max_bytes,
            self.nouns.router,
        );
        self.probe
            .measure(self.net.cycle(), class, (src, dst, bytes), || {
                SciFabric::over(fresh.clone(), size_class, max_bytes, router)
                    .map(|f| Box::new(f) as Box<dyn Fabric>)
                    .map_err(|e| FabricError::Failed(e.to_string()))
            })
    }

    fn in_flight(&self) -> u64 {
        self.packets.len() as u64
    }

    /// Exact: steps until the network has settled (the last echoes and idle gaps have
    /// passed, a quiet window has ended its generation), then jumps.
    fn skip_idle(&mut self, to: Ps) -> Result<(), FabricError> {
        self.skip_idle_counted(to).map(|_| ())
    }

    fn set_measuring(&mut self, on: bool) {
        self.measuring = on;
    }

    fn accepted(&self) -> &[u64] {
        &self.accepted
    }

    /// Not counted: an SCI ring's links carry echoes, idles and bypassed packets in every
    /// cycle, and the ring models report their own throughput measures instead.
    fn channel_loads(&self) -> Vec<ChannelLoad> {
        Vec::new()
    }

    fn nouns(&self) -> Nouns {
        self.nouns
    }
}

#[cfg(test)]
mod tests;
