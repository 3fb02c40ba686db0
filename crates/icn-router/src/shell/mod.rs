//! What every VC router microarchitecture shares, written once: the packet slab, the event
//! rings and the receive phase, the sources and injection, the watchdog's message, and (in
//! [`par`]) the partition plumbing and the parallel driver.
//!
//! A microarchitecture ([`crate::grid`], [`crate::anyradix`]) keeps a
//! [`Shell`] and owns only what differs: its input and output VC state, routing, VC and switch
//! allocation and traversal (the hot loops, kept apart so that each stays specialised), and
//! where a flit lands. Its cycle is
//!
//! 1. [`Shell::receive`] (credits, then ejections), then its own landing of
//!    [`Shell::take_landings`]' flits;
//! 2. its routers' VC allocation, then switch allocation and traversal, which push into the
//!    rings at `now + delay` (or, for another partition, into `sent_flits` / `sent_creds`);
//! 3. [`Shell::inject_all`] with the injection channel of each source;
//! 4. [`Shell::stalled`] → [`deadlock`] with its wait-for diagnosis.
//!
//! Flits are `u32`s (`packet << 2 | flags`) and travel as one `u64` event with their target
//! input VC above them, so a landing needs no index arithmetic.

// Indices address several parallel arrays (struct of arrays), so index loops are clearer.
#![allow(clippy::needless_range_loop)]

pub mod par;

use super::alloc::{AllocKind, rr_pick};
use icn_engine::{Invalid, ModelError};
use std::collections::VecDeque;

pub(crate) const NONE: u32 = u32::MAX;
pub(crate) const HEAD: u8 = 1;
pub(crate) const TAIL: u8 = 2;

/// Packet ids must leave two bits for the flags of a packed flit.
const MAX_PACKETS: usize = 1 << 30;

/// In a partition, a link target or credit counter with this bit set belongs to another
/// partition: the rest indexes the shell's `remote_flit` / `remote_cred` tables (link × V +
/// VC). Local input VCs and counters stay below it.
pub(crate) const REMOTE: u32 = 1 << 31;

/// A flit: `pkt << 2 | flags` (`HEAD`, `TAIL`); its VC is the buffer it sits in (or, in
/// flight, the target of its [`event`]). Four bytes keep the VC buffers of an 8×8 mesh
/// (2 VCs × 8 flits) at 20 KB.
#[inline(always)]
pub(crate) fn flit(pkt: u32, flags: u8) -> u32 {
    pkt << 2 | u32::from(flags)
}

/// A flit in flight as one word: the input VC it lands in above the flit, so that switch
/// traversal stores one word and landing needs no index arithmetic.
#[inline(always)]
pub(crate) fn event(target: u32, flit: u32) -> u64 {
    u64::from(target) << 32 | u64::from(flit)
}

/// Router parameters (BookSim names in comments): the routers' keys of the `vc-router` kind
/// ([`crate::vc_net::VcNetConfig`]), read by the `vc-router` model and the cluster's
/// `[fabric]` alike; the defaults are BookSim2's `iq` router ([`VcParams::unit_delays`] with
/// 2 VCs of 8 flits).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VcParams {
    /// `num_vcs`
    pub vcs: usize,
    /// `vc_buf_size`
    pub buf: usize,
    /// `routing_delay`, `vc_alloc_delay`, `sw_alloc_delay`, `st_final_delay`
    pub routing_delay: u64,
    pub vc_alloc_delay: u64,
    pub sw_alloc_delay: u64,
    pub st_delay: u64,
    /// channel latency (BookSim: 1), `credit_delay`
    pub channel_delay: u64,
    pub credit_delay: u64,
    /// Latency of the injection and ejection channels (BookSim2: always 1); 0 means
    /// `channel_delay`. Only the router of any radix reads it.
    pub terminal_delay: u64,
    /// `vc_allocator`, `sw_allocator`
    pub vc_alloc: AllocKind,
    pub sw_alloc: AllocKind,
    pub watchdog: u64,
    /// `speculative`: switch allocation in the same cycle as VC allocation
    /// ([`crate::speculative`]); only the router of any radix has it.
    pub speculative: bool,
    /// The same bound in seconds of wall time ([`icn_engine::watchdog`]).
    pub watchdog_wall_s: u64,
}

impl Default for VcParams {
    fn default() -> Self {
        VcParams::unit_delays(2, 8, 20_000)
    }
}

impl VcParams {
    /// The injection and ejection channels' latency: `terminal_delay`, or `channel_delay`.
    pub fn terminal_latency(&self) -> u64 {
        match self.terminal_delay {
            0 => self.channel_delay,
            t => t,
        }
    }

    /// BookSim2's `iq` defaults: every pipeline and channel delay one cycle, round-robin
    /// allocators (the timing table of [`crate::grid`] with all delays 1).
    pub fn unit_delays(vcs: usize, buf: usize, watchdog: u64) -> VcParams {
        VcParams {
            vcs,
            buf,
            routing_delay: 1,
            vc_alloc_delay: 1,
            sw_alloc_delay: 1,
            st_delay: 1,
            channel_delay: 1,
            credit_delay: 1,
            terminal_delay: 0,
            vc_alloc: AllocKind::RoundRobin,
            sw_alloc: AllocKind::RoundRobin,
            watchdog,
            speculative: false,
            watchdog_wall_s: icn_engine::watchdog::DEFAULT_WALL_S,
        }
    }

    pub fn validate(&self) -> Result<(), Invalid> {
        Invalid::check((1..=16).contains(&self.vcs), "vcs", "1 ..= 16", self.vcs)?;
        Invalid::check(
            (1..=255).contains(&self.buf),
            "buf",
            "1 ..= 255 flits",
            self.buf,
        )?;
        for (key, v) in [
            ("routing_delay", self.routing_delay),
            ("vc_alloc_delay", self.vc_alloc_delay),
            ("sw_alloc_delay", self.sw_alloc_delay),
            ("st_delay", self.st_delay),
        ] {
            Invalid::check(v <= 16, key, "0 ..= 16 cycles", v)?;
        }
        Invalid::check(
            self.vc_alloc_delay >= 1,
            "vc_alloc_delay",
            "1 ..= 16 cycles",
            self.vc_alloc_delay,
        )?;
        Invalid::check(
            (1..=64).contains(&self.channel_delay),
            "channel_delay",
            "1 ..= 64 cycles",
            self.channel_delay,
        )?;
        Invalid::check(
            self.terminal_delay <= 64,
            "terminal_delay",
            "0 (= channel_delay) ..= 64 cycles",
            self.terminal_delay,
        )?;
        Invalid::check(
            (1..=64).contains(&self.credit_delay),
            "credit_delay",
            "1 ..= 64 cycles",
            self.credit_delay,
        )?;
        Invalid::check(
            (1_000..=1 << 40).contains(&self.watchdog),
            "watchdog",
            "1000 ..= 2^40 cycles",
            self.watchdog,
        )?;
        if self.speculative && self.vc_alloc_delay > self.sw_alloc_delay {
            // Checked again where the speculative router is built ([`crate::speculative`]).
            return Err(Invalid::new(
                "vc_alloc_delay",
                format!(
                    "speculative switch allocation needs vc_alloc_delay ≤ sw_alloc_delay \
                     (= {}), got {}",
                    self.sw_alloc_delay, self.vc_alloc_delay
                ),
            ));
        }
        icn_engine::watchdog::check_wall_s(self.watchdog_wall_s)
    }
}

/// A delivered packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PacketDone {
    pub src: usize,
    pub dst: usize,
    pub len: u32,
    pub created: u64,
    /// The injector's identifier (`enqueue_tagged`), 0 for `enqueue`.
    pub tag: u64,
}

pub trait VcObserver {
    fn delivered(&mut self, now: u64, p: &PacketDone);
}

impl VcObserver for Vec<(u64, PacketDone)> {
    fn delivered(&mut self, now: u64, p: &PacketDone) {
        self.push((now, *p));
    }
}

/// A source's injection channel into its router: the packet being sent and its VC.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Src {
    /// The packet being sent, or `NONE`.
    cur: u32,
    /// Its flits sent so far, and its length.
    sent: u32,
    len: u32,
    /// The VCs in use (bit mask; at most 16 VCs).
    busy: u16,
    /// The VC it is sent on; the round-robin pointer over VCs.
    vc: u8,
    ptr: u8,
}

/// The shared state of a VC network (or of one partition of it). `X` is what a
/// microarchitecture keeps per packet besides its record (the any-radix router's routing
/// header; `()` for the grid's dimension order).
pub struct Shell<X> {
    pub(crate) now: u64,
    pub(crate) measuring: bool,
    /// Set when a step failed because of the watchdog.
    pub(crate) deadlocked: bool,
    /// Credit counters: per output VC of the routers, then per source VC (a source's credits
    /// for its injection port). Ejection ports' counters stay at `buf` for ever (the
    /// terminal always sinks). The layout is the microarchitecture's.
    pub(crate) credits: Vec<u8>,
    /// Events in flight, by the cycle they take effect (`cycle & ring`): flits landing
    /// ([`event`]), flits reaching their terminal, credits arriving (an index into `credits`).
    /// They replace per-port delay lines, so the receive phase touches only what arrives; a
    /// slot is drained in push order.
    pub(crate) flits: Vec<Vec<u64>>,
    pub(crate) ejects: Vec<Vec<u64>>,
    pub(crate) creds: Vec<Vec<u32>>,
    /// Slots of the event rings minus one: the smallest power of two above the longest
    /// delay, so that with short delays the few slots in use stay in the cache.
    pub(crate) ring_mask: usize,
    /// Flits per VC buffer (the credit counters' full value).
    buf: usize,
    // Sources and their injection channel.
    queue: Vec<VecDeque<u32>>,
    src: Vec<Src>,
    /// Bit `n % 64` of word `n / 64` set while source `n` has a packet (being sent or
    /// queued): injection visits only those, in index order.
    s_active: Vec<u64>,
    // Packets (a slab with a free list) and what the microarchitecture keeps with each.
    pub(crate) pk: Vec<PacketDone>,
    pub(crate) pk_x: Vec<X>,
    free: Vec<u32>,
    /// Packets created here minus packets delivered here (in a partition the two happen in
    /// different partitions, so only the sum over partitions is the network's count).
    pub(crate) in_network: i64,
    pub(crate) last_move: u64,
    /// The watchdog's wall-time side.
    pub(crate) wall: icn_engine::watchdog::StallClock,
    // Partitions only (empty in a whole network): where remote link targets and credit
    // counters ([`REMOTE`]) are, as (partition, its local input VC / counter of VC 0) per
    // link; per local input VC the id given to the packet arriving on it from another
    // partition; and the remote events of the current cycle with the cycle they arrive.
    pub(crate) partitioned: bool,
    pub(crate) remote_flit: Vec<(u32, u32)>,
    pub(crate) remote_cred: Vec<(u32, u32)>,
    pub(crate) arriving: Vec<u32>,
    pub(crate) sent_flits: Vec<(u64, u64)>,
    pub(crate) sent_creds: Vec<(u64, u32)>,
}

/// How to size a [`Shell`].
pub(crate) struct ShellSize {
    /// Longest delay of any event (cycles).
    pub longest: usize,
    pub sources: usize,
    /// Credit counters (routers' output VCs, then sources' VCs) and their start value.
    pub counters: usize,
    pub buf: usize,
    /// Input VCs here, and this network's number of partitions.
    pub input_vcs: usize,
    pub parts: usize,
}

impl<X: Copy> Shell<X> {
    pub(crate) fn new(
        size: ShellSize,
        remote_flit: Vec<(u32, u32)>,
        remote_cred: Vec<(u32, u32)>,
    ) -> Shell<X> {
        let slots = (size.longest + 1).next_power_of_two();
        Shell {
            now: 0,
            measuring: false,
            deadlocked: false,
            credits: vec![size.buf as u8; size.counters],
            flits: vec![Vec::new(); slots],
            ejects: vec![Vec::new(); slots],
            creds: vec![Vec::new(); slots],
            ring_mask: slots - 1,
            buf: size.buf,
            queue: vec![VecDeque::new(); size.sources],
            src: vec![
                Src {
                    cur: NONE,
                    sent: 0,
                    len: 0,
                    busy: 0,
                    vc: 0,
                    ptr: 0,
                };
                size.sources
            ],
            s_active: vec![0; size.sources.div_ceil(64)],
            pk: Vec::new(),
            pk_x: Vec::new(),
            free: Vec::new(),
            in_network: 0,
            last_move: 0,
            wall: Default::default(),
            partitioned: size.parts > 1,
            remote_flit,
            remote_cred,
            arriving: if size.parts > 1 {
                vec![NONE; size.input_vcs]
            } else {
                Vec::new()
            },
            sent_flits: Vec::new(),
            sent_creds: Vec::new(),
        }
    }

    /// Sources (terminals) here.
    pub(crate) fn sources(&self) -> usize {
        self.src.len()
    }

    /// Every credit counter is back at `buf`.
    pub(crate) fn credits_full(&self) -> bool {
        self.credits.iter().all(|&c| usize::from(c) == self.buf)
    }

    /// Nothing in flight here: no flit, ejection or credit on an event ring, no flit or
    /// credit leaving for another partition, no source with a packet. With its routers idle
    /// too ([`par::VcPartition::routers_idle`]) an empty cycle changes only the clock: the
    /// allocators and injection visit only what their masks name, and routing draws its
    /// random numbers per head flit, not per cycle.
    pub(crate) fn quiet(&self) -> bool {
        self.s_active.iter().all(|&w| w == 0)
            && self.sent_flits.is_empty()
            && self.sent_creds.is_empty()
            && self.flits.iter().all(Vec::is_empty)
            && self.ejects.iter().all(Vec::is_empty)
            && self.creds.iter().all(Vec::is_empty)
    }

    /// Keeps a packet's record under a new id.
    pub(crate) fn keep(&mut self, info: PacketDone, x: X) -> u32 {
        match self.free.pop() {
            Some(id) => {
                self.pk[id as usize] = info;
                self.pk_x[id as usize] = x;
                id
            }
            None => {
                // 2^30 packets in flight would take 32 GB of packet records first.
                assert!(self.pk.len() < MAX_PACKETS, "too many packets in flight");
                self.pk.push(info);
                self.pk_x.push(x);
                (self.pk.len() - 1) as u32
            }
        }
    }

    /// Forgets packet `id` here (its tail was delivered or left for another partition).
    #[inline(always)]
    pub(crate) fn forget(&mut self, id: u32) {
        self.free.push(id);
    }

    /// Queues a packet created now at local source `n`.
    pub(crate) fn enqueue(&mut self, n: usize, src: usize, dst: usize, len: u32, tag: u64, x: X) {
        let info = PacketDone {
            src,
            dst,
            len,
            created: self.now,
            tag,
        };
        let id = self.keep(info, x);
        self.queue[n].push_back(id);
        self.s_active[n / 64] |= 1 << (n % 64);
        if self.in_network == 0 && !self.partitioned {
            // The watchdog measures stillness of a non-empty network only.
            self.last_move = self.now;
        }
        self.in_network += 1;
    }

    /// The receive phase's shared part, for ring slot `slot`: credits (increments, which
    /// commute), then ejections in push order (router order; they touch no router state).
    /// The flits landing in input VCs follow ([`Shell::take_landings`]).
    #[inline(always)]
    pub(crate) fn receive<O: VcObserver>(&mut self, slot: usize, obs: &mut O) {
        let now = self.now;
        let mut cq = std::mem::take(&mut self.creds[slot]);
        for &c in &cq {
            self.credits[c as usize] += 1;
        }
        cq.clear();
        self.creds[slot] = cq;
        let mut eq = std::mem::take(&mut self.ejects[slot]);
        for &e in &eq {
            let f = e as u32;
            if f & u32::from(TAIL) != 0 {
                let pkt = f >> 2;
                let done = self.pk[pkt as usize];
                self.free.push(pkt);
                self.in_network -= 1;
                obs.delivered(now, &done);
            }
        }
        eq.clear();
        self.ejects[slot] = eq;
    }

    /// The flits landing this cycle (slot `slot`), to be handed back by
    /// [`Shell::landed`] once the microarchitecture has buffered them.
    #[inline(always)]
    pub(crate) fn take_landings(&mut self, slot: usize) -> Vec<u64> {
        std::mem::take(&mut self.flits[slot])
    }

    #[inline(always)]
    pub(crate) fn landed(&mut self, slot: usize, mut fq: Vec<u64>) {
        fq.clear();
        self.flits[slot] = fq;
    }

    /// Every active source sends a flit if it can, in index order: `channel(n)` gives source
    /// `n`'s injection channel as (its credit counter of VC 0, the input VC 0 it lands in).
    #[inline(always)]
    pub(crate) fn inject_all(
        &mut self,
        v: usize,
        channel_delay: u64,
        mut channel: impl FnMut(usize) -> (usize, u32),
    ) {
        for word in 0..self.s_active.len() {
            let mut bits = self.s_active[word];
            while bits != 0 {
                let n = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let (counter, target) = channel(n);
                self.inject(n, v, channel_delay, counter, target);
            }
        }
    }

    /// Source `n` sends the next flit of its packet (taking a free VC round robin for a new
    /// one created before this cycle), if it has a credit.
    #[inline(always)]
    fn inject(&mut self, n: usize, v: usize, channel_delay: u64, counter: usize, target: u32) {
        let mut s = self.src[n];
        if s.cur == NONE {
            let Some(&id) = self.queue[n].front() else {
                return;
            };
            let p = self.pk[id as usize];
            if p.created >= self.now {
                return;
            }
            let free = !u64::from(s.busy) & ((1 << v) - 1);
            let Some(w) = rr_pick(free, u32::from(s.ptr)) else {
                return;
            };
            s.ptr = ((w as usize + 1) % v) as u8;
            s.busy |= 1 << w;
            s.cur = id;
            s.vc = w as u8;
            s.sent = 0;
            s.len = p.len;
        }
        let id = s.cur;
        let w = usize::from(s.vc);
        let c = counter + w;
        if self.credits[c] == 0 {
            self.src[n] = s;
            return;
        }
        self.credits[c] -= 1;
        let k = s.sent;
        let flags = if k == 0 { HEAD } else { 0 } | if k + 1 == s.len { TAIL } else { 0 };
        let at = (self.now as usize + channel_delay as usize) & self.ring_mask;
        self.flits[at].push(event(target + w as u32, flit(id, flags)));
        s.sent += 1;
        self.last_move = self.now;
        if k + 1 == s.len {
            s.busy &= !(1 << w);
            s.cur = NONE;
            self.queue[n].pop_front();
            if self.queue[n].is_empty() {
                self.s_active[n / 64] &= !(1 << (n % 64));
            }
        }
        self.src[n] = s;
    }

    /// Whether the watchdog fires: packets in a whole network and no flit moved for
    /// `watchdog` cycles, or for `wall_s` seconds of wall time (a partition's is the
    /// driver's, [`par::ParNet::step`]). `Some(true)`: by the wall clock.
    #[inline(always)]
    pub(crate) fn stalled(&mut self, watchdog: u64, wall_s: u64) -> Option<bool> {
        if self.partitioned || self.in_network == 0 {
            return None;
        }
        let still = self.now - self.last_move;
        if still >= watchdog {
            Some(false)
        } else if self.wall.expired(self.last_move, still, wall_s) {
            Some(true)
        } else {
            None
        }
    }
}

/// The watchdog's error: how long nothing moved, and the wait-for cycle among the blocked
/// input VCs `waits` (named by `name`), see [`par::describe_waits`].
pub(crate) fn deadlock(
    still: Still,
    now: u64,
    in_network: i64,
    mut waits: Vec<(par::InputVc, par::InputVc)>,
    name: impl Fn(par::InputVc) -> String,
) -> ModelError {
    waits.sort_unstable();
    let how = match still {
        Still::Cycles(c) => format!("no flit moved for {c} cycles"),
        Still::Wall { seconds, cycles } => icn_engine::watchdog::wall_message(seconds, cycles),
    };
    ModelError::Failed(format!(
        "deadlock: {how} (cycle {now}) with {in_network} packets in the network{}",
        par::describe_waits(&waits, name)
    ))
}

/// How long nothing moved when a watchdog fired: its cycle bound, or its wall-time bound
/// after so many cycles.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Still {
    Cycles(u64),
    Wall { seconds: u64, cycles: u64 },
}

/// The error of a full VC receiving a flit (out of line: it never happens in a correct run).
#[cold]
#[inline(never)]
pub(crate) fn overflow(ivc: usize) -> ModelError {
    ModelError::Failed(format!(
        "VC buffer overflow at input VC {ivc}: credit flow control failed"
    ))
}
