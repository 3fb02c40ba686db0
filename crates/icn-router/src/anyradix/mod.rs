//! Input-queued VC routers of any radix on any [`icn_topo::Network`], routed by any
//! [`icn_topo::routing::Routing`] function — dragonflies, fat trees, flattened butterflies,
//! hypercubes, meshes of any dimension.
//!
//! The router is the one of [`crate::grid`] (same stages, same timing table, same credit
//! flow control, same allocator policies and pointer rules); what changes is the bookkeeping
//! that the 5-port fast path packs into one 64-bit word per router:
//!
//! | state | fast path ([`crate::grid::VcNet`]) | here |
//! |---|---|---|
//! | ports × VCs | 5 × ≤ 8, constants | `radix` ≤ [`MAX_RADIX`] × `vcs` ≤ [`MAX_VCS`], run time |
//! | input VCs waiting for RC/VA, SA | one `u64` per router, bit `port·V + vc` | two levels: a `u64` of ports per router, a `u32` of VCs per port |
//! | held output VCs | one `u64` per router | a `u32` of VCs per output port |
//! | VC allocation | `allocate` over `P·V ≤ 64` outputs | per output port (an input VC asks for the VCs of one port only), same round-robin / iSLIP picks |
//! | routing | dimension order in place | [`Routing::inject`] at the source router, [`Routing::next_hop`] at every router; the packet carries the 12-byte [`Header`] |
//! | terminals | one per router, port 4 | `c` per router on ports `0..c` (icn-topo's convention) |
//!
//! **VC classes → VCs.** A routing function with `C` classes gets `V ≥ C` VCs per port split
//! into `C` contiguous ranges: class `c` may use VCs `c·V/C .. (c+1)·V/C` (BookSim's split; with
//! `C = 2` the fast path's dateline halves). VC allocation picks any free VC of the range.
//!
//! **Random routing choices** (Valiant's group, a random up port) come from a SplitMix64 stream
//! per router, seeded from the run's seed: the same seed gives the same run.
//! **UGAL's queue estimate** of an output port is the flits held in the downstream buffers of
//! its VCs (`buf` minus the credits of each VC), BookSim's `GetUsedCredit`.
//!
//! **Channel delay per link class**: `global_delay` is the channel latency of dragonfly
//! global links (the long cables); their credits return over the same cable, so a credit
//! coming back over one takes `credit_delay + global_delay − channel_delay`.
//!
//! Memory: per router `radix × (V × (16 + 4·buf + 5) + 40)` bytes plus the network's wiring table
//! (see [`VcAnyNet::bytes_per_router`]); per terminal ~80 bytes; nothing per pair.

// Indices address several parallel arrays (struct of arrays), so index loops are clearer.
#![allow(clippy::needless_range_loop)]

use super::alloc::{AllocKind, allocate, rr_first};
use super::shell::par::{InputVc, PortPlacer, vc_partition, watchdog};
use super::shell::{
    HEAD, NONE, REMOTE, Shell, ShellSize, TAIL, VcObserver, VcParams, event, overflow,
};
use icn_engine::{Invalid, ModelError};
use icn_topo::routing::{Header, Routing};
use icn_topo::{FarEnd, Network};
use rand::RngCore;
use std::sync::Arc;

/// Largest router radix (port masks are `u64`).
pub const MAX_RADIX: usize = 64;
/// Most VCs per port (VC masks are `u32`, class ranges fit a byte).
pub const MAX_VCS: usize = 16;

const IDLE: u8 = 0;
const ROUTING: u8 = 1;
const ACTIVE: u8 = 2;
/// `down` of a port that leads to a terminal or nowhere: flits leaving by it are ejected.
const EJECT: u32 = u32::MAX;

/// An input VC (16 bytes).
#[derive(Clone, Copy, Debug, Default)]
struct InVc {
    /// Cycle from which the next stage (VA while routing, SA once active) may happen.
    ready: u64,
    head: u8,
    len: u8,
    st: u8,
    /// Output port chosen by routing.
    out: u8,
    /// While routing: the class's VC range `lo..hi`; once active, `lo` is the output VC.
    lo: u8,
    hi: u8,
}

/// SplitMix64 as a `RngCore` over a router's 8-byte state.
struct Mix<'a>(&'a mut u64);

impl RngCore for Mix<'_> {
    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    fn next_u64(&mut self) -> u64 {
        *self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        for chunk in dst.chunks_mut(8) {
            let x = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&x[..chunk.len()]);
        }
    }
}

/// Per-cycle scratch space, sized once (no allocation per cycle).
#[derive(Default)]
struct Scratch {
    /// VA requesters: (input VC within the router `i·V + w`, output port, free VCs asked for).
    va: Vec<(u16, u8, u32)>,
    /// Per output VC of the router: index into `va` of the best requester so far, or `NONE`.
    best: Vec<u32>,
    /// Per requester: granted VCs (iSLIP) or the chosen output VC (round robin).
    got: Vec<u32>,
    /// SA: per input port, the requested output ports.
    req: Vec<u64>,
    /// SA: (input port, output port, VC) of every ready input VC.
    cands: Vec<(u8, u8, u8)>,
    grant: Vec<u8>,
    /// UGAL: per output port of the source router, flits held downstream.
    queues: Vec<u32>,
}

/// A network of VC routers on an [`icn_topo::Network`].
pub struct VcAnyNet {
    pub p: VcParams,
    net: Arc<Network>,
    routing: Arc<dyn Routing>,
    radix: usize,
    v: usize,
    /// VC classes of the routing function.
    classes: usize,
    routers: usize,
    /// The packet slab (with each packet's routing header), event rings, credits, sources,
    /// watchdog and partition tables.
    sh: Shell<Header>,
    buf: Vec<u32>,
    ivcs: Vec<InVc>,
    /// Per output port: bit `w` set while its VC `w` is held by a packet.
    ovc_busy: Vec<u32>,
    // Credits (in the shell): per output VC of every port `(r·R + o)·V + w`, then per
    // terminal's injection VC `(ports + t)·V + w`. Ejection ports' counters stay at `buf`.
    // Per port `r·R + i`.
    /// Output side: the downstream input port's VC 0 as a global input VC, or [`EJECT`].
    down: Vec<u32>,
    /// Input side: base index in `credits` of the counters its credits return to.
    cred_to: Vec<u32>,
    /// Output side: cycles from switch allocation to landing downstream.
    fdelay: Vec<u16>,
    /// Input side: cycles a credit takes back upstream.
    cdelay: Vec<u16>,
    busy: Vec<u64>,
    sa_in: Vec<u8>,
    sa_out: Vec<u8>,
    sa_vc: Vec<u8>,
    // Per input VC / output VC of a router, index `(r·R + i)·V + w`.
    va_in: Vec<u16>,
    va_out: Vec<u16>,
    pub(crate) routing_ports: Vec<u64>,
    routing_vcs: Vec<u32>,
    pub(crate) sa_ports: Vec<u64>,
    sa_vcs: Vec<u32>,
    // Terminals.
    term_port: Vec<u32>,
    /// The routing function's random stream, one per input port: a port's packets draw in
    /// their arrival order, which is the same in one process and over partitions, where the
    /// order in which different ports' flits land in a cycle is not (one stream per router
    /// made a random routing's draws — `dim_order`'s ties — differ over ranks).
    rng: Vec<u64>,
    scratch: Scratch,
    // Partitions (see `par.rs`): the first router here; per terminal of the whole network
    // its index here (`NONE` elsewhere).
    lo: usize,
    terminal_here: Vec<u32>,
}

impl VcAnyNet {
    /// Blocked input VCs of the routers here, each with the input VC downstream it waits on
    /// (as [`crate::grid::VcNet`]'s: a head whose every VC of its class is held waits on the
    /// first; an active packet with flits and no credit waits on its output VC's buffer).
    pub(crate) fn waits(&self) -> Vec<(InputVc, InputVc)> {
        let (rad, v) = (self.radix, self.v);
        let mut out = Vec::new();
        for r in 0..self.routers {
            let g = self.lo + r;
            let ends = self.net.ports(g as u32);
            for i in 0..rad {
                for w in 0..v {
                    let s = self.ivcs[(r * rad + i) * v + w];
                    if s.len == 0 || s.st == IDLE {
                        continue;
                    }
                    let o = usize::from(s.out);
                    let Some(FarEnd::Router { router, port }) = ends.get(o).copied() else {
                        continue;
                    };
                    let op = r * rad + o;
                    let (lo, hi) = (usize::from(s.lo), usize::from(s.hi));
                    let blocked = if s.st == ROUTING {
                        let held = |x: usize| self.ovc_busy[op] >> x & 1 == 1;
                        (lo < hi && (lo..hi).all(held)).then_some(lo)
                    } else {
                        (self.sh.credits[op * v + lo] == 0).then_some(lo)
                    };
                    if let Some(x) = blocked {
                        out.push(((g, i, w), (router as usize, usize::from(port), x)));
                    }
                }
            }
        }
        out
    }

    /// The channel that feeds the input VC (`(0,1) +x → (1,1)`) and the VC.
    pub(crate) fn input_vc_name(&self, (r, i, w): InputVc) -> String {
        match self.net.ports(r as u32).get(i).copied() {
            Some(FarEnd::Router { router, port }) => {
                format!("{} VC {w}", self.net.channel_name(router, port))
            }
            _ => format!("router {r} port {i} VC {w}"),
        }
    }
}

impl VcAnyNet {
    /// The network `net` routed by `routing` (built for `net`), with `global_delay` the channel
    /// latency of dragonfly global links; `seed` seeds the routers' random choices.
    pub fn new(
        net: Arc<Network>,
        routing: Arc<dyn Routing>,
        p: VcParams,
        global_delay: u64,
        seed: u64,
    ) -> Result<VcAnyNet, Invalid> {
        Self::partition(net, routing, p, global_delay, seed, 1, 0)
    }

    /// Routers `k·R/parts .. (k+1)·R/parts` of the network's `R` with their terminals, as
    /// partition `k` of `parts` (see `anyradix/par.rs`); partition 0 of 1 is the network.
    pub fn partition(
        net: Arc<Network>,
        routing: Arc<dyn Routing>,
        p: VcParams,
        global_delay: u64,
        seed: u64,
        parts: usize,
        k: usize,
    ) -> Result<VcAnyNet, Invalid> {
        p.validate()?;
        Invalid::check(
            (1..=MAX_VCS).contains(&p.vcs),
            "vcs",
            &format!("1 ..= {MAX_VCS}"),
            p.vcs,
        )?;
        Invalid::check(
            (1..=1024).contains(&global_delay),
            "global_delay",
            "1 ..= 1024 cycles",
            global_delay,
        )?;
        let radix = usize::from(net.radix());
        if radix > MAX_RADIX {
            return Err(Invalid::new(
                "topology",
                format!("router radix {radix} is above the VC router's {MAX_RADIX}"),
            ));
        }
        let (v, classes) = (p.vcs, usize::from(routing.vc_classes()));
        if v < classes {
            return Err(Invalid::new(
                "vcs",
                format!(
                    "the routing uses {classes} VC classes, so it needs vcs ≥ {classes}, got {v}"
                ),
            ));
        }
        let all = net.routers() as usize;
        let all_terminals = net.terminals() as usize;
        if (all * radix + all_terminals) * v >= REMOTE as usize || all_terminals >= NONE as usize {
            return Err(Invalid::new(
                "topology",
                format!(
                    "{} router ports × {v} VCs: too many VCs for the VC router",
                    all * radix
                ),
            ));
        }
        let split = icn_engine::lockstep::Split::checked(all, parts, k, "router")?;
        let (lo, hi) = (split.start(k), split.start(k + 1));
        let routers = hi - lo;
        let ports = routers * radix;
        // This partition's terminals, numbered here in increasing global order.
        let mut terminal_here = vec![NONE; all_terminals];
        let mut terminals = 0;
        for (t, here) in terminal_here.iter_mut().enumerate() {
            if (lo..hi).contains(&(net.terminal_at(t as u32).0 as usize)) {
                *here = terminals as u32;
                terminals += 1;
            }
        }
        let placer = PortPlacer { split, k, radix, v };
        let place = |g, port, table: &mut Vec<(u32, u32)>| placer.place(g, port, table);
        let (mut remote_flit, mut remote_cred) = (Vec::new(), Vec::new());
        let extra = global_delay.saturating_sub(p.channel_delay);
        let mut down = vec![EJECT; ports];
        let mut cred_to = vec![0u32; ports];
        let mut fdelay = vec![0u16; ports];
        let mut cdelay = vec![0u16; ports];
        let mut term_port = vec![0u32; terminals];
        let base = p.sw_alloc_delay + p.st_delay;
        // Every link with an end here: its output side if the sending router is here, its
        // input side (where credits go back to, and how long they take) if the receiving one is.
        for r in 0..all {
            for (o, &e) in net.ports(r as u32).iter().enumerate() {
                let sender_here = (lo..hi).contains(&r);
                let op = r.wrapping_sub(lo).wrapping_mul(radix) + o;
                let long = net.is_global(r as u32, o as u16);
                let chan = match e {
                    FarEnd::Terminal(_) => p.terminal_latency(),
                    _ => p.channel_delay + if long { extra } else { 0 },
                };
                if sender_here {
                    fdelay[op] = (base + chan) as u16;
                }
                match e {
                    FarEnd::Router { router, port } => {
                        let port = usize::from(port);
                        if sender_here {
                            down[op] = place(router as usize, port, &mut remote_flit);
                        }
                        let g = router as usize;
                        if (lo..hi).contains(&g) {
                            let ip = (g - lo) * radix + port;
                            // The input port at the other end returns its credits here.
                            cred_to[ip] = place(r, o, &mut remote_cred);
                            cdelay[ip] = (p.credit_delay + if long { extra } else { 0 }) as u16;
                        }
                    }
                    FarEnd::Terminal(t) if sender_here => {
                        let n = terminal_here[t as usize] as usize;
                        cred_to[op] = ((ports + n) * v) as u32;
                        // Credits to a terminal cross its (terminal_delay) channel.
                        cdelay[op] = (p.credit_delay + p.terminal_latency())
                            .saturating_sub(p.channel_delay)
                            .max(1) as u16;
                        term_port[n] = op as u32;
                    }
                    _ => {}
                }
            }
        }
        let size = ShellSize {
            longest: (fdelay.iter().copied().max().unwrap_or(0) as usize)
                .max(cdelay.iter().copied().max().unwrap_or(0) as usize)
                .max(p.terminal_latency() as usize),
            sources: terminals,
            counters: (ports + terminals) * v,
            buf: p.buf,
            input_vcs: ports * v,
            parts,
        };
        Ok(VcAnyNet {
            radix,
            v,
            classes,
            routers,
            sh: Shell::new(size, remote_flit, remote_cred),
            buf: vec![0; ports * v * p.buf],
            ivcs: vec![InVc::default(); ports * v],
            ovc_busy: vec![0; ports],
            down,
            cred_to,
            fdelay,
            cdelay,
            busy: vec![0; ports],
            sa_in: vec![0; ports],
            sa_out: vec![0; ports],
            sa_vc: vec![0; ports],
            va_in: vec![0; ports * v],
            va_out: vec![0; ports * v],
            routing_ports: vec![0; routers],
            routing_vcs: vec![0; ports],
            sa_ports: vec![0; routers],
            sa_vcs: vec![0; ports],
            term_port,
            rng: ((lo * radix) as u64..(hi * radix) as u64)
                .map(|p| icn_engine::rng::derive_seed(seed, p))
                .collect(),
            scratch: Scratch {
                best: vec![NONE; radix * v],
                got: Vec::new(),
                req: vec![0; radix],
                grant: vec![u8::MAX; radix],
                queues: vec![0; radix],
                ..Scratch::default()
            },
            lo,
            terminal_here,
            p,
            net,
            routing,
        })
    }

    /// No input VC waits in routing, VC or switch allocation: a step visits no router.
    pub fn routers_idle(&self) -> bool {
        self.routing_ports.iter().all(|&m| m == 0) && self.sa_ports.iter().all(|&m| m == 0)
    }

    pub fn network(&self) -> &Network {
        &self.net
    }

    pub fn radix(&self) -> usize {
        self.radix
    }

    /// Heap bytes of router state per router (buffers, VC state, credits, allocator
    /// pointers, masks, per-port tables), without the network's wiring table.
    pub fn bytes_per_router(&self) -> usize {
        let (r, v, b) = (self.radix, self.v, self.p.buf);
        r * (v * (4 * b + std::mem::size_of::<InVc>() + 1 + 2 + 2)
            + 4 // ovc_busy
            + 4 + 4 + 2 + 2 + 8 + 3 // down, cred_to, delays, busy, SA pointers
            + 4 + 4 // VC masks
            + 8) // RNG
            + 8 + 8 // port masks
    }

    /// Output channels joining two routers, as `router · radix + port` (of a partition: its
    /// routers counted from its first).
    pub fn inter_router_channels(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.routers * self.radix).filter(|&o| {
            matches!(
                self.net
                    .end((self.lo + o / self.radix) as u32, (o % self.radix) as u16),
                FarEnd::Router { .. }
            )
        })
    }

    /// Flits sent on output channel `router · radix + port` while measuring.
    pub fn busy(&self, channel: usize) -> u64 {
        self.busy[channel]
    }

    /// Creates a packet of `len` flits at terminal `src` for terminal `dst`.
    pub fn enqueue_tagged(&mut self, src: usize, dst: usize, len: u32, tag: u64) {
        let n = self.terminal_here[src] as usize;
        self.sh
            .enqueue(n, src, dst, len, tag, Header::to(dst as u32));
    }

    /// Routes the head of input VC `ivc` of router `r` from cycle `from`: at the source
    /// router (it came in from a terminal) the routing function first fills in its header.
    fn start_routing(&mut self, r: usize, ivc: usize, from: u64) {
        let f = self.buf[ivc * self.p.buf + self.ivcs[ivc].head as usize];
        debug_assert!(f & u32::from(HEAD) != 0, "a packet starts with its head");
        let id = (f >> 2) as usize;
        let ip = ivc / self.v;
        let mut rng = Mix(&mut self.rng[ip]);
        let mut hdr = self.sh.pk_x[id];
        let up = self.cred_to[ip];
        let entering = up & REMOTE == 0 && up as usize >= self.routers * self.radix * self.v;
        let adaptive = self.routing.adaptive();
        let q = &mut self.scratch.queues;
        if entering || adaptive {
            // The flits in the downstream buffers of each output port of this router.
            for o in 0..self.radix {
                let op = r * self.radix + o;
                q[o] = (0..self.v)
                    .map(|w| (self.p.buf - usize::from(self.sh.credits[op * self.v + w])) as u32)
                    .sum();
            }
        }
        if entering {
            // From a terminal: the packet enters the network here.
            let pk = self.sh.pk[id];
            hdr = self
                .routing
                .inject(pk.src as u32, pk.dst as u32, &mut rng, q);
        }
        let router = (self.lo + r) as u32;
        let hop = if adaptive {
            self.routing.next_hop_queued(router, &mut hdr, &mut rng, q)
        } else {
            self.routing.next_hop(router, &mut hdr, &mut rng)
        };
        self.sh.pk_x[id] = hdr;
        let c = usize::from(hop.vc);
        let s = &mut self.ivcs[ivc];
        s.st = ROUTING;
        s.out = hop.port as u8;
        s.lo = (c * self.v / self.classes) as u8;
        s.hi = ((c + 1) * self.v / self.classes) as u8;
        s.ready = from + self.p.routing_delay;
        let i = ip % self.radix;
        self.routing_ports[r] |= 1 << i;
        self.routing_vcs[ip] |= 1 << (ivc % self.v);
    }

    /// One clock of the whole network.
    pub fn step<O: VcObserver>(&mut self, obs: &mut O) -> Result<(), ModelError> {
        self.step_with(obs, |n, r| {
            if n.routing_ports[r] != 0 {
                n.vc_allocate(r);
            }
            if n.sa_ports[r] != 0 {
                n.switch_allocate::<false>(r, 0, 0);
            }
        })
    }

    /// One clock with `allocate(self, r)` as router `r`'s allocation and traversal: the
    /// receive phase, landing, every router's allocation, injection and the watchdog, so that
    /// a microarchitecture that differs only in its allocation (`speculative/`) supplies that.
    #[inline(always)]
    pub(crate) fn step_with<O: VcObserver>(
        &mut self,
        obs: &mut O,
        mut allocate: impl FnMut(&mut VcAnyNet, usize),
    ) -> Result<(), ModelError> {
        let now = self.sh.now;
        let slot = (now as usize) & self.sh.ring_mask;
        self.sh.receive(slot, obs);
        let fq = self.sh.take_landings(slot);
        let mut landed = Ok(());
        for &e in &fq {
            landed = self.land((e >> 32) as usize, e as u32);
            if landed.is_err() {
                break;
            }
        }
        self.sh.landed(slot, fq);
        landed?;
        for r in 0..self.routers {
            allocate(self, r);
        }
        let (v, term_port) = (self.v, &self.term_port);
        let counters = self.routers * self.radix;
        self.sh.inject_all(v, self.p.terminal_latency(), |n| {
            ((counters + n) * v, term_port[n] * v as u32)
        });
        let (limit, wall_s) = (self.p.watchdog, self.p.watchdog_wall_s);
        watchdog(self, limit, wall_s)?;
        self.sh.now += 1;
        Ok(())
    }

    fn land(&mut self, ivc: usize, f: u32) -> Result<(), ModelError> {
        let b = self.p.buf;
        let s = self.ivcs[ivc];
        if s.len as usize == b {
            return Err(overflow(ivc));
        }
        let mut at = s.head as usize + s.len as usize;
        if at >= b {
            at -= b;
        }
        self.buf[ivc * b + at] = f;
        self.ivcs[ivc].len += 1;
        let ip = ivc / self.v;
        let r = ip / self.radix;
        if s.st == ACTIVE {
            self.sa_ports[r] |= 1 << (ip % self.radix);
            self.sa_vcs[ip] |= 1 << (ivc % self.v);
        } else if s.len == 0 && s.st == IDLE {
            self.start_routing(r, ivc, self.sh.now);
        }
        Ok(())
    }
}

/// Local round-robin pointer within output port `o`'s VCs of a pointer `ptr` over the
/// router's output VCs `0..R·V`: the first VC at or after `ptr`, wrapping, is the first at or
/// after the local pointer when `ptr` falls in the port's range, else the port's lowest.
#[inline]
fn local_ptr(ptr: u16, o: usize, v: usize) -> u8 {
    let p = usize::from(ptr);
    if p >= o * v && p < (o + 1) * v {
        (p - o * v) as u8
    } else {
        0
    }
}

/// Round-robin distance of requester `i` from pointer `ptr` among `n`: the smallest wins,
/// which is the first requester at or after `ptr`, wrapping ([`rr_pick`] over a bit mask).
#[inline]
fn distance(i: usize, ptr: u16, n: usize) -> usize {
    (i + n - usize::from(ptr)) % n
}

mod stages;

pub mod par;

#[cfg(test)]
mod tests;
