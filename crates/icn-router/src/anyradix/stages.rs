//! The per-router stages of [`VcAnyNet`]: VC allocation, switch allocation with traversal,
//! injection from the terminals. Same policies and pointer rules as the fast path's
//! (`grid/stages.rs`), over two-level masks instead of one word per router.

// Indices address several parallel arrays (struct of arrays), so index loops are clearer.
#![allow(clippy::needless_range_loop)]

use super::*;

/// The set bits of `mask`, lowest first.
#[inline]
fn bits(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let b = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            b
        })
    })
}

impl VcAnyNet {
    /// VC allocation at router `r`. Requesters are input VCs past their routing delay with a
    /// free VC in their class range of their output port; resources are the router's output
    /// VCs `o·V + w`. Round robin: each requester picks a VC from its pointer, each VC grants
    /// the requester nearest its pointer; iSLIP: each VC grants, each requester accepts.
    /// Pointers index the router's `R·V` input and output VCs, as in the fast path.
    pub(crate) fn vc_allocate(&mut self, r: usize) {
        let (rad, v, now) = (self.radix, self.v, self.sh.now);
        let n = rad * v;
        let base = r * n;
        let mut sc = std::mem::take(&mut self.scratch);
        sc.va.clear();
        for i in bits(self.routing_ports[r]) {
            let ip = r * rad + i;
            for w in bits(u64::from(self.routing_vcs[ip])) {
                let s = self.ivcs[ip * v + w];
                if s.ready > now {
                    continue;
                }
                let o = usize::from(s.out);
                let class = ((1u32 << (s.hi - s.lo)) - 1) << s.lo;
                let free = class & !self.ovc_busy[r * rad + o];
                if free != 0 {
                    sc.va.push(((i * v + w) as u16, s.out, free));
                }
            }
        }
        if sc.va.is_empty() {
            self.scratch = sc;
            return;
        }
        sc.got.clear();
        sc.got.resize(sc.va.len(), 0);
        // Keeps requester `j` as output VC `ovc`'s pick if it is nearer its pointer.
        let better =
            |best: &mut [u32], va: &[(u16, u8, u32)], va_out: &[u16], ovc: usize, j: usize| {
                let b = best[ovc];
                let k = usize::from(va[j].0);
                if b == NONE
                    || distance(k, va_out[base + ovc], n)
                        < distance(usize::from(va[b as usize].0), va_out[base + ovc], n)
                {
                    best[ovc] = j as u32;
                }
            };
        match self.p.vc_alloc {
            AllocKind::RoundRobin => {
                for j in 0..sc.va.len() {
                    let (k, o, free) = sc.va[j];
                    let o = usize::from(o);
                    let w = rr_first(
                        u64::from(free),
                        local_ptr(self.va_in[base + usize::from(k)], o, v),
                    );
                    let ovc = o * v + w as usize;
                    sc.got[j] = ovc as u32;
                    better(&mut sc.best, &sc.va, &self.va_out, ovc, j);
                }
                for j in 0..sc.va.len() {
                    let ovc = sc.got[j] as usize;
                    if sc.best[ovc] == j as u32 {
                        self.va_grant(r, sc.va[j].0, ovc);
                    }
                }
                for j in 0..sc.va.len() {
                    sc.best[sc.got[j] as usize] = NONE;
                }
            }
            AllocKind::Islip => {
                for j in 0..sc.va.len() {
                    let (_, o, free) = sc.va[j];
                    for w in bits(u64::from(free)) {
                        better(
                            &mut sc.best,
                            &sc.va,
                            &self.va_out,
                            usize::from(o) * v + w,
                            j,
                        );
                    }
                }
                for j in 0..sc.va.len() {
                    let (_, o, free) = sc.va[j];
                    for w in bits(u64::from(free)) {
                        let ovc = usize::from(o) * v + w;
                        if sc.best[ovc] == j as u32 {
                            sc.got[j] |= 1 << w;
                        }
                    }
                }
                for j in 0..sc.va.len() {
                    let (k, o, free) = sc.va[j];
                    for w in bits(u64::from(free)) {
                        sc.best[usize::from(o) * v + w] = NONE;
                    }
                    if sc.got[j] != 0 {
                        let o = usize::from(o);
                        let w = rr_first(
                            u64::from(sc.got[j]),
                            local_ptr(self.va_in[base + usize::from(k)], o, v),
                        );
                        self.va_grant(r, k, o * v + w as usize);
                    }
                }
            }
        }
        self.scratch = sc;
    }

    /// Input VC `k` (`i·V + w` within router `r`) wins output VC `ovc` (`o·V + w'`).
    fn va_grant(&mut self, r: usize, k: u16, ovc: usize) {
        let (rad, v) = (self.radix, self.v);
        let n = rad * v;
        let base = r * n;
        let k = usize::from(k);
        let (i, w) = (k / v, k % v);
        let (o, ow) = (ovc / v, ovc % v);
        let ip = r * rad + i;
        self.ovc_busy[r * rad + o] |= 1 << ow;
        let s = &mut self.ivcs[base + k];
        s.st = ACTIVE;
        s.lo = ow as u8;
        s.ready = self.sh.now + self.p.vc_alloc_delay;
        if s.len > 0 {
            self.sa_vcs[ip] |= 1 << w;
            self.sa_ports[r] |= 1 << i;
        }
        self.routing_vcs[ip] &= !(1 << w);
        if self.routing_vcs[ip] == 0 {
            self.routing_ports[r] &= !(1 << i);
        }
        self.va_in[base + k] = ((ovc + 1) % n) as u16;
        self.va_out[base + ovc] = ((k + 1) % n) as u16;
    }

    /// Switch allocation and traversal at router `r`: input ports × output ports, then the
    /// granted input's VC round robin among its ready VCs bound for that output. Input ports
    /// in `taken_in` and output ports in `taken_out` are left out. `SPEC`: the requesters are
    /// not the ready VCs but the heads that won VC allocation this very cycle (speculative
    /// switch allocation, `speculative/`). Returns the input and output ports granted.
    pub(crate) fn switch_allocate<const SPEC: bool>(
        &mut self,
        r: usize,
        taken_in: u64,
        taken_out: u64,
    ) -> (u64, u64) {
        let (rad, v, now, b) = (self.radix, self.v, self.sh.now, self.p.buf);
        let pr = r * rad;
        let mut sc = std::mem::take(&mut self.scratch);
        sc.cands.clear();
        let mut inputs = 0u64;
        for i in bits(self.sa_ports[r] & !taken_in) {
            let ip = pr + i;
            for w in bits(u64::from(self.sa_vcs[ip])) {
                let s = self.ivcs[ip * v + w];
                let o = usize::from(s.out);
                // A head granted its output VC this cycle is the one active VC whose
                // `ready` lies a VC-allocation delay ahead.
                let eligible = if SPEC {
                    s.st == ACTIVE && s.ready == now + self.p.vc_alloc_delay
                } else {
                    s.ready <= now
                };
                if eligible
                    && taken_out >> o & 1 == 0
                    && self.sh.credits[(pr + o) * v + usize::from(s.lo)] > 0
                {
                    sc.req[i] |= 1 << o;
                    sc.cands.push((i as u8, o as u8, w as u8));
                    inputs |= 1 << i;
                }
            }
        }
        if inputs == 0 {
            self.scratch = sc;
            return (0, 0);
        }
        allocate::<MAX_RADIX>(
            self.p.sw_alloc,
            &sc.req[..rad],
            rad,
            &mut self.sa_in[pr..pr + rad],
            &mut self.sa_out[pr..pr + rad],
            &mut sc.grant[..rad],
        );
        for i in bits(inputs) {
            sc.req[i] = 0;
        }
        let measuring = u64::from(self.sh.measuring);
        let mut cursor = 0;
        let mut reroute = 0u64;
        let mut reroute_vc = [0u8; MAX_RADIX];
        let (mut won_in, mut won_out) = (0u64, 0u64);
        for i in bits(inputs) {
            let g = sc.grant[i];
            if g == u8::MAX {
                continue;
            }
            let o = usize::from(g);
            won_in |= 1 << i;
            won_out |= 1 << o;
            // Candidates are in input order: those of input i start at or after the cursor.
            let mut mask = 0u64;
            while cursor < sc.cands.len() && usize::from(sc.cands[cursor].0) <= i {
                let (ci, co, cw) = sc.cands[cursor];
                if usize::from(ci) == i && usize::from(co) == o {
                    mask |= 1 << cw;
                }
                cursor += 1;
            }
            let ip = pr + i;
            let w = rr_first(mask, self.sa_vc[ip]) as usize;
            self.sa_vc[ip] = if w + 1 == v { 0 } else { (w + 1) as u8 };
            let ivc = ip * v + w;
            let s = &mut self.ivcs[ivc];
            if SPEC {
                // The body follows the head a cycle later, as after a non-speculative grant.
                s.ready = now + 1;
            }
            let f = self.buf[ivc * b + s.head as usize];
            let h = s.head as usize + 1;
            s.head = if h == b { 0 } else { h as u8 };
            s.len -= 1;
            let at = now + u64::from(self.cdelay[ip]);
            let counter = self.cred_to[ip] + w as u32;
            if counter & REMOTE == 0 {
                self.sh.creds[at as usize & self.sh.ring_mask].push(counter);
            } else {
                self.sh.sent_creds.push((at, counter));
            }
            let out_vc = usize::from(s.lo);
            let op = pr + o;
            let at = now + u64::from(self.fdelay[op]);
            let down = self.down[op];
            if down == EJECT {
                self.sh.ejects[at as usize & self.sh.ring_mask].push(event(0, f));
            } else {
                self.sh.credits[op * v + out_vc] -= 1;
                let e = event(down + out_vc as u32, f);
                if down & REMOTE == 0 {
                    self.sh.flits[at as usize & self.sh.ring_mask].push(e);
                } else {
                    self.sh.sent_flits.push((at, e));
                }
            }
            self.busy[op] += measuring;
            let tail = f & u32::from(TAIL) != 0;
            if tail {
                self.ovc_busy[op] &= !(1 << out_vc);
                s.st = IDLE;
            }
            if s.len == 0 || tail {
                self.sa_vcs[ip] &= !(1 << w);
                if self.sa_vcs[ip] == 0 {
                    self.sa_ports[r] &= !(1 << i);
                }
            }
            if tail && s.len > 0 {
                reroute |= 1 << i;
                reroute_vc[i] = w as u8;
            }
        }
        self.scratch = sc;
        self.sh.last_move = now;
        for i in bits(reroute) {
            let ivc = (pr + i) * v + usize::from(reroute_vc[i]);
            self.start_routing(r, ivc, now + 1);
        }
        (won_in, won_out)
    }
}
