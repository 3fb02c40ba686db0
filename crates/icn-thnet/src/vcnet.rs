//! A network of input-queued virtual-channel routers, after BookSim2's `iq` router.
//!
//! Each router has 5 ports (+x, −x, +y, −y, local) and `V` VCs per input port, each a FIFO
//! of `buf` flits, with credit flow control. A head flit goes through routing (RC), VC
//! allocation (VA), switch allocation (SA) and switch traversal (ST); body flits only
//! through SA and ST. Timing, with `a` the cycle a head flit lands in an input buffer:
//!
//! | event                                  | cycle                              |
//! |----------------------------------------|------------------------------------|
//! | eligible for VA                        | `a + routing_delay`                |
//! | VA won at `v`, eligible for SA         | `v + vc_alloc_delay`               |
//! | SA won at `s`: credit sent upstream    | `s`, arrives at `s + credit_delay` |
//! | lands in the next router's buffer      | `s + sw_alloc_delay + st_delay + channel_delay` |
//! | a new packet (created at `c`) leaves its source | `c + 1` (head), one flit per cycle after |
//!
//! With all delays 1: per hop 1 + 1 + 1 + 1 + 1 = 5 cycles; a packet created at `c` lands at
//! the first router at `c + 2`, so its tail reaches the destination terminal at
//! `c + 2 + 5·H + 5 + (L − 1) = c + 7 + 5·H + (L − 1)` — the zero-load formula, tested
//! in `vcnet_tests.rs`. Routing is dimension order (x then y); on a torus the VCs split into
//! two dateline classes (class 1 after crossing the wrap-around link of the current
//! dimension, reset on turning), which makes DOR deadlock-free there; with a single VC there
//! are no classes and a torus can deadlock, which the watchdog reports (no flit moved for
//! `watchdog` cycles while packets are in the network). The ejection port has no credits
//! (the terminal always sinks); the source queue is unbounded.

// Indices address several parallel arrays (struct of arrays), so index loops are clearer.
#![allow(clippy::needless_range_loop)]

use crate::alloc::{AllocKind, allocate, rr_allocate5, rr_first, rr_pick};
use crate::topology::Grid;
use icn_engine::{Invalid, ModelError};
use std::collections::VecDeque;

pub const P: usize = 5;
const LOCAL: usize = 4;
const NONE: u32 = u32::MAX;
const HEAD: u8 = 1;
const TAIL: u8 = 2;

/// Router parameters (BookSim names in comments).
#[derive(Clone, Debug, PartialEq)]
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
    /// `channel_delay`. Only the router of any radix (`vcnet_any`) reads it.
    pub terminal_delay: u64,
    /// `vc_allocator`, `sw_allocator`
    pub vc_alloc: AllocKind,
    pub sw_alloc: AllocKind,
    pub watchdog: u64,
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
    /// allocators (the timing table above with all delays 1).
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
        )
    }
}

/// A delivered packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PacketDone {
    pub src: usize,
    pub dst: usize,
    pub len: u32,
    pub created: u64,
    /// The injector's identifier ([`VcNet::enqueue_tagged`]), 0 for [`VcNet::enqueue`].
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

/// A flit is a `u32`: `pkt << 2 | flags` (`HEAD`, `TAIL`); its VC is the buffer it sits in
/// (or, in flight, the target of its event, see [`event`]). Four bytes keep the VC buffers of
/// an 8×8 mesh (2 VCs × 8 flits) at 20 KB. It carries no arrival time: a head is routed from
/// the cycle it lands in an empty VC, or from the cycle after the previous tail left (later
/// than its landing), see [`VcNet::start_routing`].
#[inline(always)]
fn flit(pkt: u32, flags: u8) -> u32 {
    pkt << 2 | u32::from(flags)
}

/// A flit in flight as one word: the global input VC it lands in (`ip·V + w`, or at least
/// [`EJECT`] for the terminal) above the flit, so that switch traversal stores one word and
/// landing needs no index arithmetic.
#[inline(always)]
fn event(target: u32, flit: u32) -> u64 {
    u64::from(target) << 32 | u64::from(flit)
}

/// Event targets from here up are the ejection port (`EJECT + w`), and so is the `down` of
/// ports without a neighbour.
const EJECT: u32 = 0xffff_ff00;

/// Packet ids must leave two bits for the flags of a packed flit.
const MAX_PACKETS: usize = 1 << 30;

/// In a partition ([`VcNet::partition`]), a link target or credit counter with this bit set
/// belongs to another partition: the rest indexes [`VcNet`]'s `remote_flit` / `remote_cred`
/// tables (link × V + VC). Local input VCs and counters stay below it.
pub(crate) const REMOTE: u32 = 1 << 31;

/// What one partition of a VC network ([`VcNet`], [`crate::vcnet_any::VcAnyNet`]) sends
/// another: a flit landing in, or a credit returning to, one of its routers at cycle `at`
/// (local indices of the receiver). A head flit carries its packet's record `R`, which the
/// receiver keeps under an id of its own until the tail leaves.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum VcMsg<R = PacketDone> {
    Flit {
        at: u64,
        ivc: u32,
        flags: u8,
        packet: Option<R>,
    },
    Credit {
        at: u64,
        counter: u32,
    },
    /// A packet created now at source `src` (from the driver: [`VcNet::enqueue_tagged`]).
    Create {
        src: usize,
        dst: usize,
        len: u32,
        tag: u64,
    },
}

/// An input VC: buffer ring position, pipeline state and the route / VC it was given.
#[derive(Clone, Copy, Debug, Default)]
struct InVc {
    /// Cycle from which the next stage (VA when routing, SA when active) may happen.
    ready: u64,
    head: u8,
    len: u8,
    /// `IDLE`, `ROUTING` or `ACTIVE`.
    st: u8,
    /// Output port chosen by routing.
    out: u8,
    /// While routing: VC class range `lo | hi << 4`; once active: the output VC.
    ovc: u8,
}

/// Per router, what switch allocation and traversal need of its five ports, in one block:
/// one base pointer instead of six arrays (the grant loop ran out of registers), and port
/// indices masked to `0..8` need no bounds checks.
#[derive(Clone, Copy, Debug, Default)]
struct Ports {
    /// Per output port: flits sent while measuring.
    busy: [u64; 8],
    /// Per output port: the downstream input port's VC 0 as a global input VC (`ip·V`), or
    /// `EJECT` (ejection, mesh edge): adding the output VC gives the flit's event target.
    down: [u32; 8],
    /// Per input port: the base index in `credits` of the counters its credits return to.
    cred_to: [u32; 8],
    /// Switch allocator pointers: per input port, per output port (5 used, 3 scratch), and
    /// per input port the round robin among its VCs.
    sa_in: [u8; 8],
    sa_out: [u8; 8],
    sa_vc: [u8; 8],
}

/// A source's injection channel into input port LOCAL of its router.
#[derive(Clone, Copy, Debug)]
struct Src {
    /// The packet being sent, or `NONE`.
    cur: u32,
    /// Its flits sent so far, and its length.
    sent: u32,
    len: u32,
    /// The VC it is sent on; the round-robin pointer over VCs; the VCs in use (bit mask).
    vc: u8,
    ptr: u8,
    busy: u8,
}

const IDLE: u8 = 0;
const ROUTING: u8 = 1;
const ACTIVE: u8 = 2;

pub struct VcNet {
    p: VcParams,
    grid: Grid,
    /// Routers simulated here (all of them, or a partition's `lo .. lo + routers`).
    routers: usize,
    lo: usize,
    /// Per router of the whole grid: its (x, y) position.
    xy: Vec<(u16, u16)>,
    v: usize,
    pub now: u64,
    // Input VCs, index `(r*P + i)*V + v`.
    /// VC buffers, `buf` flits ([`flit`]) per input VC.
    buf: Vec<u32>,
    /// Per input VC: its state in one small struct (one cache line holds four).
    ivcs: Vec<InVc>,
    // Output VCs, index `(r*P + o)*V + v`.
    /// Per router: bit `o·V + w` set while output VC `w` of port `o` is held by a packet.
    ovc_busy: Vec<u64>,
    /// Credit counters: per output VC `(r*P + o)*V + w` of the routers, then per source VC
    /// `(ports + n)*V + w` (a source's credits for input port LOCAL of its router). Those of
    /// the ejection ports (`o = LOCAL`) stay at `buf` (> 0) for ever: the terminal always sinks.
    credits: Vec<u8>,
    /// Events in flight, by the cycle they take effect (`cycle & ring`): flits landing
    /// ([`event`]: target input VC and flit) and credits arriving (an index into `credits`).
    /// They replace per-port delay lines, so the receive phase touches only what arrives; a
    /// slot is drained in push order.
    flits: Vec<Vec<u64>>,
    /// Flits reaching their terminal, by cycle as `flits` (switch traversal picks the ring by
    /// a select; one mixed ring cost a hard-to-predict branch per event).
    ejects: Vec<Vec<u64>>,
    creds: Vec<Vec<u32>>,
    /// Slots of the event rings minus one: the smallest power of two above the longest
    /// delay, so that with short delays the few slots in use stay in the cache (with a fixed
    /// 128 slots each cycle touched a cold one).
    ring: usize,
    /// Cycles from switch allocation to landing downstream (`sw_alloc + st + channel`).
    fdelay: usize,
    // Sources (one per router) and their injection channel into input port LOCAL.
    queue: Vec<VecDeque<u32>>,
    /// Per source: the packet being sent (one struct: injecting a flit touched five arrays).
    src: Vec<Src>,
    /// Bit `n % 64` of word `n / 64` set while source `n` has a packet (being sent or
    /// queued): the injection phase visits only those, in index order as before, instead of
    /// testing every source (a test whose outcome is hard to predict).
    s_active: Vec<u64>,
    // Packets (a slab with a free list).
    pk: Vec<PacketDone>,
    free: Vec<u32>,
    // Partitions only (empty in a whole network): where remote link targets and credit
    // counters ([`REMOTE`]) are, as (partition, its local input VC / counter of VC 0) per link;
    // per local input VC the id given to the packet arriving on it from another partition;
    // and the remote events of the current cycle ([`event`]s and counters, REMOTE-tagged).
    partitioned: bool,
    remote_flit: Vec<(u32, u32)>,
    remote_cred: Vec<(u32, u32)>,
    arriving: Vec<u32>,
    sent_flits: Vec<u64>,
    sent_creds: Vec<u32>,
    // Allocator pointers.
    va_in: Vec<u8>,
    va_out: Vec<u8>,
    /// Per router: its ports' links, counters and switch-allocator pointers.
    rp: Vec<Ports>,
    /// Per router: bit `port·V + vc` set for input VCs waiting in RC/VA …
    routing_mask: Vec<u64>,
    /// … and for active input VCs holding flits (SA candidates), so idle VCs cost nothing.
    sa_mask: Vec<u64>,
    /// Packets created here minus packets delivered here (in a partition the two happen in
    /// different partitions, so only the sum over partitions is the network's count).
    in_network: i64,
    last_move: u64,
    pub measuring: bool,
    /// Set when [`VcNet::step`] failed because of the watchdog.
    pub deadlocked: bool,
}

impl VcNet {
    pub fn new(grid: Grid, p: VcParams) -> Result<VcNet, Invalid> {
        Self::partition(grid, p, 1, 0)
    }

    /// Routers `k·R/parts .. (k+1)·R/parts` of the grid's `R` (in index order) with their
    /// sources, as partition `k` of `parts` for [`icn_engine::lockstep`]: links to routers
    /// of other partitions carry [`VcMsg`]s. Partition 0 of 1 is the whole network.
    pub fn partition(grid: Grid, p: VcParams, parts: usize, k: usize) -> Result<VcNet, Invalid> {
        p.validate()?;
        // The per-cycle code is compiled for each V up to 8 (`step`); more VCs take the
        // router of any radix (`vcnet_any`).
        Invalid::check((1..=8).contains(&p.vcs), "vcs", "1 ..= 8", p.vcs)?;
        let all = grid.x * grid.y;
        let v = p.vcs;
        if all * P * v >= REMOTE as usize {
            return Err(Invalid::new(
                "topology",
                format!("{all} routers × {v} VCs: too many input VCs for the VC router"),
            ));
        }
        Invalid::check(
            (1..=all).contains(&parts) && k < parts,
            "threads",
            &format!("1 ..= {all} (one router per thread at least)"),
            parts,
        )?;
        let split = icn_engine::lockstep::Split { items: all, parts };
        let (lo, hi) = (split.start(k), split.start(k + 1));
        let routers = hi - lo;
        let ports = routers * P;
        // The neighbour of router `r` through port `o` (+x, −x, +y, −y); leaving by `o` lands
        // in its input port `o ^ 1`, and input port `i` of `r` is fed by neighbour `i`.
        let nb = |r: usize, o: usize| neighbour(grid, r, o);
        let placer = par::PortPlacer {
            split,
            k,
            radix: P,
            v,
        };
        let place = |g, port, table: &mut Vec<(u32, u32)>| placer.place(g, port, table);
        let (mut remote_flit, mut remote_cred) = (Vec::new(), Vec::new());
        let mut rp = vec![Ports::default(); routers];
        for (r, ports_of) in rp.iter_mut().enumerate() {
            let g = lo + r;
            for o in 0..P {
                ports_of.down[o] = match nb(g, o) {
                    Some(n) => place(n, o ^ 1, &mut remote_flit),
                    None => EJECT,
                };
                // Credits for input port `o` go back to the output `o ^ 1` of neighbour `o`,
                // or (the local port, a mesh edge) to this router's source.
                ports_of.cred_to[o] = match nb(g, o) {
                    Some(n) => place(n, o ^ 1, &mut remote_cred),
                    None => ((ports + r) * v) as u32,
                };
            }
        }
        let fdelay = (p.sw_alloc_delay + p.st_delay + p.channel_delay) as usize;
        let slots = (fdelay
            .max(p.credit_delay as usize)
            .max(p.channel_delay as usize)
            + 1)
        .next_power_of_two();
        Ok(VcNet {
            grid,
            routers,
            lo,
            xy: (0..all)
                .map(|r| ((r % grid.x) as u16, (r / grid.x) as u16))
                .collect(),
            v,
            now: 0,
            buf: vec![0; ports * v * p.buf],
            ivcs: vec![InVc::default(); ports * v],
            ovc_busy: vec![0; routers],
            credits: vec![p.buf as u8; (ports + routers) * v],
            flits: vec![Vec::new(); slots],
            ejects: vec![Vec::new(); slots],
            creds: vec![Vec::new(); slots],
            ring: slots - 1,
            fdelay,
            queue: vec![VecDeque::new(); routers],
            src: vec![
                Src {
                    cur: NONE,
                    sent: 0,
                    len: 0,
                    vc: 0,
                    ptr: 0,
                    busy: 0,
                };
                routers
            ],
            s_active: vec![0; routers.div_ceil(64)],
            pk: Vec::new(),
            free: Vec::new(),
            partitioned: parts > 1,
            arriving: if parts > 1 {
                vec![NONE; ports * v]
            } else {
                Vec::new()
            },
            remote_flit,
            remote_cred,
            sent_flits: Vec::new(),
            sent_creds: Vec::new(),
            va_in: vec![0; ports * v],
            va_out: vec![0; ports * v],
            rp,
            routing_mask: vec![0; routers],
            sa_mask: vec![0; routers],
            in_network: 0,
            last_move: 0,
            measuring: false,
            deadlocked: false,
            p,
        })
    }

    pub fn nodes(&self) -> usize {
        self.routers
    }

    /// Output channels that join two routers (for utilisation).
    pub fn inter_router_channels(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.routers * P).filter(|&o| self.rp[o / P].down[o % P] != EJECT)
    }

    /// Flits sent on output channel `r*P + o` while measuring.
    pub fn busy(&self, channel: usize) -> u64 {
        self.rp[channel / P].busy[channel % P]
    }

    /// Packets created and not yet delivered (including those still in source queues); of a
    /// partition, those created here minus those delivered here.
    pub fn in_network(&self) -> i64 {
        self.in_network
    }

    /// The first router of this partition (0 for a whole network) and its router count.
    pub fn routers(&self) -> std::ops::Range<usize> {
        self.lo..self.lo + self.routers
    }

    /// Creates a packet of `len` flits at source `src` now.
    pub fn enqueue(&mut self, src: usize, dst: usize, len: u32) {
        self.enqueue_tagged(src, dst, len, 0);
    }

    /// As [`VcNet::enqueue`], with an identifier returned in the [`PacketDone`].
    pub fn enqueue_tagged(&mut self, src: usize, dst: usize, len: u32, tag: u64) {
        let info = PacketDone {
            src,
            dst,
            len,
            created: self.now,
            tag,
        };
        let id = self.keep(info);
        let n = src - self.lo;
        self.queue[n].push_back(id);
        self.s_active[n / 64] |= 1 << (n % 64);
        if self.in_network == 0 && !self.partitioned {
            // The watchdog measures stillness of a non-empty network only.
            self.last_move = self.now;
        }
        self.in_network += 1;
    }

    /// Keeps a packet's record under a new id.
    fn keep(&mut self, info: PacketDone) -> u32 {
        match self.free.pop() {
            Some(id) => {
                self.pk[id as usize] = info;
                id
            }
            None => {
                // 2^30 packets in flight would take 32 GB of packet records first.
                assert!(self.pk.len() < MAX_PACKETS, "too many packets in flight");
                self.pk.push(info);
                (self.pk.len() - 1) as u32
            }
        }
    }

    /// Dimension-order route at (local) router `r` for the packet `id` at the front of input
    /// VC `ivc`: (output port, VC class range).
    ///
    /// On a torus the class says whether the packet crossed the dateline (the wrap-around
    /// link) of the dimension it travels in: it did if it crosses it now, or if it arrived in
    /// that dimension on a VC of the upper class (which it was given because it had crossed).
    /// A turn into the next dimension, or the injection port, starts again from "not crossed".
    fn route(&self, r: usize, ivc: usize, id: u32) -> (usize, usize, usize) {
        let g = self.grid;
        let dst = self.pk[id as usize].dst;
        // Coordinates from a table: divisions by the run-time width cost tens of cycles each.
        let me = self.lo + r;
        let (x, y) = (self.xy[me].0 as usize, self.xy[me].1 as usize);
        let (dx, dy) = (self.xy[dst].0 as usize, self.xy[dst].1 as usize);
        if !g.wrap {
            // Mesh: the port by selects (where a packet turns is hard to predict).
            let px = if dx > x { 0 } else { 1 };
            let py = if dy > y { 2 } else { 3 };
            let out = if y != dy { py } else { LOCAL };
            let out = if x != dx { px } else { out };
            return (out, 0, self.v);
        }
        let leg = |from: usize, to: usize, k: usize, plus: usize| -> usize {
            // (to − from) mod k, for from, to < k.
            let fwd = if to >= from { to - from } else { to + k - from };
            if !g.wrap {
                if to > from { plus } else { plus + 1 }
            } else if fwd <= k - fwd {
                plus
            } else {
                plus + 1
            }
        };
        let out = if x != dx {
            leg(x, dx, g.x, 0)
        } else if y != dy {
            leg(y, dy, g.y, 2)
        } else {
            return (LOCAL, 0, self.v);
        };
        if !g.wrap {
            return (out, 0, self.v);
        }
        let dim = out / 2;
        let (pos, k) = if dim == 0 { (x, g.x) } else { (y, g.y) };
        let wraps = if out % 2 == 0 { pos + 1 == k } else { pos == 0 };
        if self.v == 1 {
            // One VC: no dateline classes, so DOR on a torus can deadlock (watchdog).
            return (out, 0, 1);
        }
        let half = self.v / 2;
        let (port_in, vc_in) = ((ivc - r * P * self.v) / self.v, ivc % self.v);
        let crossed = wraps || (port_in != LOCAL && port_in / 2 == dim && vc_in >= half);
        if crossed {
            (out, half, self.v)
        } else {
            (out, 0, half)
        }
    }

    /// A head flit has become the front of idle input VC `ivc` of router `r` at cycle `from`
    /// (it landed then in an empty VC, or the previous packet's tail left at `from − 1`, after
    /// the head landed): route it.
    fn start_routing(&mut self, r: usize, ivc: usize, from: u64) {
        let f = self.buf[ivc * self.p.buf + self.ivcs[ivc].head as usize];
        debug_assert!(f & u32::from(HEAD) != 0, "a packet starts with its head");
        let (out, lo, hi) = self.route(r, ivc, f >> 2);
        self.ivcs[ivc].st = ROUTING;
        self.routing_mask[r] |= 1 << (ivc - r * P * self.v);
        self.ivcs[ivc].out = out as u8;
        self.ivcs[ivc].ovc = (lo | hi << 4) as u8; // class range until VA picks a VC
        self.ivcs[ivc].ready = from + self.p.routing_delay;
    }

    fn push_flit(&mut self, ivc: usize, f: u32) -> Result<(), ModelError> {
        let b = self.p.buf;
        if self.ivcs[ivc].len as usize == b {
            return Err(overflow(ivc));
        }
        let mut at = self.ivcs[ivc].head as usize + self.ivcs[ivc].len as usize;
        if at >= b {
            at -= b;
        }
        self.buf[ivc * b + at] = f;
        self.ivcs[ivc].len += 1;
        Ok(())
    }

    /// One clock of the whole network.
    ///
    /// Dispatches on the number of VCs so that the per-cycle code is compiled once per `V`
    /// (`NV = P·V` input VCs per router): index arithmetic by a constant, scratch arrays of
    /// exactly the size used, unrolled VC loops. Same results for every `V` as a generic loop.
    pub fn step<O: VcObserver>(&mut self, obs: &mut O) -> Result<(), ModelError> {
        if self.partitioned {
            return self.step_part(obs);
        }
        match self.v {
            1 => self.step_v::<1, 5, O, false>(obs),
            2 => self.step_v::<2, 10, O, false>(obs),
            3 => self.step_v::<3, 15, O, false>(obs),
            4 => self.step_v::<4, 20, O, false>(obs),
            5 => self.step_v::<5, 25, O, false>(obs),
            6 => self.step_v::<6, 30, O, false>(obs),
            7 => self.step_v::<7, 35, O, false>(obs),
            8 => self.step_v::<8, 40, O, false>(obs),
            v => unreachable!("vcs = {v} passed validation"),
        }
    }

    /// [`VcNet::step`] of a partition: compiled apart (`PART`), so that the whole network's
    /// cycle carries no test for links to other partitions.
    #[inline(never)]
    fn step_part<O: VcObserver>(&mut self, obs: &mut O) -> Result<(), ModelError> {
        match self.v {
            1 => self.step_v::<1, 5, O, true>(obs),
            2 => self.step_v::<2, 10, O, true>(obs),
            3 => self.step_v::<3, 15, O, true>(obs),
            4 => self.step_v::<4, 20, O, true>(obs),
            5 => self.step_v::<5, 25, O, true>(obs),
            6 => self.step_v::<6, 30, O, true>(obs),
            7 => self.step_v::<7, 35, O, true>(obs),
            8 => self.step_v::<8, 40, O, true>(obs),
            v => unreachable!("vcs = {v} passed validation"),
        }
    }

    fn step_v<const V: usize, const NV: usize, O: VcObserver, const PART: bool>(
        &mut self,
        obs: &mut O,
    ) -> Result<(), ModelError> {
        debug_assert_eq!((V, NV), (self.v, P * self.v));
        let now = self.now;
        let slot = (now as usize) & self.ring;

        // 1. Receive: credits, then flits (from routers and sources). Credit increments commute
        // and flits landing in one cycle go to distinct input VCs, so only the ejection order
        // (routers in index order, one flit each at most) matters, and push order keeps it.
        let mut cq = std::mem::take(&mut self.creds[slot]);
        for &c in &cq {
            self.credits[c as usize] += 1;
        }
        cq.clear();
        self.creds[slot] = cq;
        // Ejections first: they touch no router state, and among themselves keep their order.
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
        let mut fq = std::mem::take(&mut self.flits[slot]);
        for &e in &fq {
            let (target, f) = ((e >> 32) as u32, e as u32);
            debug_assert!(
                target < EJECT,
                "routing never leaves by a port without a link"
            );
            if let Err(e) = self.land::<V>(target as usize, f) {
                fq.clear();
                self.flits[slot] = fq;
                return Err(e);
            }
        }
        fq.clear();
        self.flits[slot] = fq;

        // 2. Routers: VC allocation, then switch allocation and traversal. Each router's
        // stages touch only its own state (what they send lands in later cycles), so VA of
        // a block of 64 routers can run before their SA; the routers with work are taken
        // from a bit mask built without branches (whether a router is busy is hard to
        // predict).
        for first in (0..self.routers).step_by(64) {
            let block = first..self.routers.min(first + 64);
            let mut va = nonzero_mask(&self.routing_mask[block.clone()]);
            while va != 0 {
                let r = first + va.trailing_zeros() as usize;
                va &= va - 1;
                self.vc_allocate::<V, NV>(r);
            }
            let mut sa = nonzero_mask(&self.sa_mask[block]);
            while sa != 0 {
                let r = first + sa.trailing_zeros() as usize;
                sa &= sa - 1;
                self.switch_allocate::<V, PART>(r);
            }
        }

        // 3. Sources.
        for word in 0..self.s_active.len() {
            let mut bits = self.s_active[word];
            while bits != 0 {
                let n = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                self.inject::<V>(n);
            }
        }

        if !PART && self.in_network > 0 && now - self.last_move >= self.p.watchdog {
            self.deadlocked = true;
            let mut waits = self.waits();
            waits.sort_unstable();
            return Err(ModelError::Failed(format!(
                "deadlock: no flit moved for {} cycles (cycle {now}) with {} packets in the network{}",
                self.p.watchdog,
                self.in_network,
                par::describe_waits(&waits, |c| self.input_vc_name(c))
            )));
        }
        self.now += 1;
        Ok(())
    }

    #[inline(always)]
    fn land<const V: usize>(&mut self, ivc: usize, f: u32) -> Result<(), ModelError> {
        let was_empty = self.ivcs[ivc].len == 0;
        self.push_flit(ivc, f)?;
        let r = ivc / (P * V);
        let st = self.ivcs[ivc].st;
        // Whether the VC is active (a body flit following its head) is hard to predict, so
        // the candidate bit is set by a select; only a head landing in an idle VC branches.
        self.sa_mask[r] |= u64::from(st == ACTIVE) << (ivc - r * P * V);
        if was_empty && st == IDLE {
            self.start_routing(r, ivc, self.now);
        }
        Ok(())
    }
}

/// The neighbour of router `r` of `grid` through port `o` (+x, −x, +y, −y); leaving by `o`
/// lands in its input port `o ^ 1`. `None` at a mesh edge and for the local port.
fn neighbour(grid: Grid, r: usize, o: usize) -> Option<usize> {
    let (x, y) = (r % grid.x, r / grid.x);
    match o {
        0 => (x + 1 < grid.x || grid.wrap && grid.x > 1).then(|| y * grid.x + (x + 1) % grid.x),
        1 => (x > 0 || grid.wrap && grid.x > 1).then(|| y * grid.x + (x + grid.x - 1) % grid.x),
        2 => (y + 1 < grid.y || grid.wrap && grid.y > 1).then(|| ((y + 1) % grid.y) * grid.x + x),
        3 => (y > 0 || grid.wrap && grid.y > 1).then(|| ((y + grid.y - 1) % grid.y) * grid.x + x),
        _ => None,
    }
}

impl VcNet {
    /// Blocked input VCs of the routers here, each with the input VC downstream it waits on:
    /// a head in VC allocation whose every VC of its class on its output is held (it waits on
    /// the first), or an active packet with flits and no credit for its output VC. The
    /// watchdog's diagnosis (read only after the network stopped).
    pub(crate) fn waits(&self) -> Vec<(par::InputVc, par::InputVc)> {
        let v = self.v;
        let mut out = Vec::new();
        for r in 0..self.routers {
            let g = self.lo + r;
            for i in 0..P {
                for w in 0..v {
                    let s = self.ivcs[(r * P + i) * v + w];
                    let o = usize::from(s.out);
                    if s.len == 0 || s.st == IDLE || o == LOCAL {
                        continue;
                    }
                    let Some(n) = neighbour(self.grid, g, o) else {
                        continue;
                    };
                    let blocked = if s.st == ROUTING {
                        let (lo, hi) = (usize::from(s.ovc & 15), usize::from(s.ovc >> 4));
                        let held = |x: usize| self.ovc_busy[r] >> (o * v + x) & 1 == 1;
                        (lo < hi && (lo..hi).all(held)).then_some(lo)
                    } else {
                        let x = usize::from(s.ovc);
                        (self.credits[(r * P + o) * v + x] == 0).then_some(x)
                    };
                    if let Some(x) = blocked {
                        out.push(((g, i, w), (n, o ^ 1, x)));
                    }
                }
            }
        }
        out
    }

    /// `(x,y) in from +x VC 0`: router, the side its input port faces, VC.
    pub(crate) fn input_vc_name(&self, (r, i, w): par::InputVc) -> String {
        const SIDE: [&str; P] = ["+x", "-x", "+y", "-y", "local"];
        let (x, y) = self.xy[r];
        format!("({x},{y}) in from {} VC {w}", SIDE[i])
    }
}

/// Bit `j` set for each non-zero `words[j]` (at most 64 words).
#[inline(always)]
fn nonzero_mask(words: &[u64]) -> u64 {
    let mut m = 0;
    for (j, &w) in words.iter().enumerate() {
        m |= u64::from(w != 0) << j;
    }
    m
}

/// The error of a full VC receiving a flit (out of line: it never happens in a correct run).
#[cold]
#[inline(never)]
fn overflow(ivc: usize) -> ModelError {
    ModelError::Failed(format!(
        "VC buffer overflow at input VC {ivc}: credit flow control failed"
    ))
}

#[path = "vcnet_stages.rs"]
mod stages;

#[cfg(test)]
#[path = "vcnet_tests.rs"]
mod tests;

#[path = "vcnet_par.rs"]
pub mod par;

#[cfg(test)]
#[path = "vcnet_par_tests.rs"]
mod par_tests;
