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
//! in `grid/tests.rs`. Routing is dimension order (x then y); on a torus the VCs split into
//! two dateline classes (class 1 after crossing the wrap-around link of the current
//! dimension, reset on turning), which makes DOR deadlock-free there; with a single VC there
//! are no classes and a torus can deadlock, which the watchdog reports (no flit moved for
//! `watchdog` cycles while packets are in the network). The ejection port has no credits
//! (the terminal always sinks); the source queue is unbounded.

// Indices address several parallel arrays (struct of arrays), so index loops are clearer.
#![allow(clippy::needless_range_loop)]

use super::alloc::{AllocKind, allocate, islip_allocate5, rr_allocate5, rr_first};
use super::shell::par::{InputVc, PortPlacer, vc_partition, watchdog};
use super::shell::{HEAD, REMOTE, Shell, ShellSize, TAIL, event, overflow};
pub use super::shell::{PacketDone, VcObserver, VcParams};
use icn_engine::{Invalid, ModelError};
use icn_fabric::traffic::Grid;

pub const P: usize = 5;
const LOCAL: usize = 4;

/// Event targets from here up are the ejection port (`EJECT + w`), and so is the `down` of
/// ports without a neighbour.
const EJECT: u32 = 0xffff_ff00;

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
    /// The packet slab, event rings, credits, sources, watchdog and partition tables.
    sh: Shell<()>,
    // Input VCs, index `(r*P + i)*V + v`.
    /// VC buffers, `buf` flits ([`flit`]) per input VC.
    buf: Vec<u32>,
    /// Per input VC: its state in one small struct (one cache line holds four).
    ivcs: Vec<InVc>,
    // Output VCs, index `(r*P + o)*V + v`.
    /// Per router: bit `o·V + w` set while output VC `w` of port `o` is held by a packet.
    ovc_busy: Vec<u64>,
    // Credit counters (in the shell): per output VC `(r*P + o)*V + w` of the routers, then
    // per source VC `(ports + n)*V + w` (a source's credits for input port LOCAL of its
    // router). Those of the ejection ports (`o = LOCAL`) stay at `buf` for ever.
    /// Cycles from switch allocation to landing downstream (`sw_alloc + st + channel`).
    fdelay: usize,
    // Allocator pointers.
    va_in: Vec<u8>,
    va_out: Vec<u8>,
    /// Per router: its ports' links, counters and switch-allocator pointers.
    rp: Vec<Ports>,
    /// Per router: bit `port·V + vc` set for input VCs waiting in RC/VA …
    routing_mask: Vec<u64>,
    /// … and for active input VCs holding flits (SA candidates), so idle VCs cost nothing.
    sa_mask: Vec<u64>,
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
        // router of any radix (`router::anyradix`).
        Invalid::check((1..=8).contains(&p.vcs), "vcs", "1 ..= 8", p.vcs)?;
        let all = grid.x * grid.y;
        let v = p.vcs;
        if all * P * v >= REMOTE as usize {
            return Err(Invalid::new(
                "topology",
                format!("{all} routers × {v} VCs: too many input VCs for the VC router"),
            ));
        }
        let split = icn_engine::lockstep::Split::checked(all, parts, k, "router")?;
        let (lo, hi) = (split.start(k), split.start(k + 1));
        let routers = hi - lo;
        let ports = routers * P;
        // The neighbour of router `r` through port `o` (+x, −x, +y, −y); leaving by `o` lands
        // in its input port `o ^ 1`, and input port `i` of `r` is fed by neighbour `i`.
        let nb = |r: usize, o: usize| neighbour(grid, r, o);
        let placer = PortPlacer {
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
        let size = ShellSize {
            longest: fdelay
                .max(p.credit_delay as usize)
                .max(p.channel_delay as usize),
            sources: routers,
            counters: (ports + routers) * v,
            buf: p.buf,
            input_vcs: ports * v,
            parts,
        };
        Ok(VcNet {
            grid,
            routers,
            lo,
            xy: (0..all)
                .map(|r| ((r % grid.x) as u16, (r / grid.x) as u16))
                .collect(),
            v,
            sh: Shell::new(size, remote_flit, remote_cred),
            buf: vec![0; ports * v * p.buf],
            ivcs: vec![InVc::default(); ports * v],
            ovc_busy: vec![0; routers],
            fdelay,
            va_in: vec![0; ports * v],
            va_out: vec![0; ports * v],
            rp,
            routing_mask: vec![0; routers],
            sa_mask: vec![0; routers],
            p,
        })
    }

    /// No input VC waits in routing, VC or switch allocation: a step visits no router.
    pub fn routers_idle(&self) -> bool {
        self.routing_mask.iter().all(|&m| m == 0) && self.sa_mask.iter().all(|&m| m == 0)
    }

    /// Output channels that join two routers (for utilisation).
    pub fn inter_router_channels(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.routers * P).filter(|&o| self.rp[o / P].down[o % P] != EJECT)
    }

    /// Flits sent on output channel `r*P + o` while measuring.
    pub fn busy(&self, channel: usize) -> u64 {
        self.rp[channel / P].busy[channel % P]
    }

    /// The first router of this partition (0 for a whole network) and its router count.
    pub fn routers(&self) -> std::ops::Range<usize> {
        self.lo..self.lo + self.routers
    }

    /// As [`VcNet::enqueue`], with an identifier returned in the [`PacketDone`].
    pub fn enqueue_tagged(&mut self, src: usize, dst: usize, len: u32, tag: u64) {
        self.sh.enqueue(src - self.lo, src, dst, len, tag, ());
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
        let dst = self.sh.pk[id as usize].dst;
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
        if self.sh.partitioned {
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
        let now = self.sh.now;
        let slot = (now as usize) & self.sh.ring_mask;

        // 1. Receive: credits, then flits (from routers and sources). Credit increments commute
        // and flits landing in one cycle go to distinct input VCs, so only the ejection order
        // (routers in index order, one flit each at most) matters, and push order keeps it.
        self.sh.receive(slot, obs);
        let fq = self.sh.take_landings(slot);
        for &e in &fq {
            let (target, f) = ((e >> 32) as u32, e as u32);
            debug_assert!(
                target < EJECT,
                "routing never leaves by a port without a link"
            );
            if let Err(e) = self.land::<V>(target as usize, f) {
                self.sh.landed(slot, fq);
                return Err(e);
            }
        }
        self.sh.landed(slot, fq);

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

        // 3. Sources, each into input port LOCAL of its router.
        let counters = self.routers * P;
        self.sh.inject_all(V, self.p.channel_delay, |n| {
            ((counters + n) * V, ((n * P + LOCAL) * V) as u32)
        });

        if !PART {
            let (limit, wall_s) = (self.p.watchdog, self.p.watchdog_wall_s);
            watchdog(self, limit, wall_s)?;
        }
        self.sh.now += 1;
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
            self.start_routing(r, ivc, self.sh.now);
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
    pub(crate) fn waits(&self) -> Vec<(InputVc, InputVc)> {
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
                        (self.sh.credits[(r * P + o) * v + x] == 0).then_some(x)
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
    pub(crate) fn input_vc_name(&self, (r, i, w): InputVc) -> String {
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

pub mod par;
mod stages;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod par_tests;
