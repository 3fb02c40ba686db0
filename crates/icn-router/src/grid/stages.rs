//! The per-router pipeline stages of [`VcNet`]: VC allocation, switch allocation with
//! traversal (split from `mod.rs` to keep files short).

// Indices address several parallel arrays (struct of arrays), so index loops are clearer.
#![allow(clippy::needless_range_loop)]

use super::*;

impl VcNet {
    #[inline(always)]
    pub(super) fn vc_allocate<const V: usize, const NV: usize>(&mut self, r: usize) {
        let mut pending = self.routing_mask[r];
        let (v, n) = (V, NV);
        let base = r * n;
        let mut req = [0u64; NV];
        // Input VCs with at least one free output VC to ask for.
        let mut asking = 0u64;
        while pending != 0 {
            let i = pending.trailing_zeros() as usize;
            pending &= pending - 1;
            let ivc = base + i;
            let ready = self.ivcs[ivc].ready <= self.sh.now;
            let o = self.ivcs[ivc].out as usize;
            let (lo, hi) = (
                (self.ivcs[ivc].ovc & 15) as usize,
                (self.ivcs[ivc].ovc >> 4) as usize,
            );
            // The free output VCs of the class range.
            let class = ((1u64 << (hi - lo)) - 1) << (o * v + lo);
            let free = class & !self.ovc_busy[r];
            // Selects: whether a waiting head can ask is hard to predict (the allocator reads
            // every entry of `req`, so those not asking must stay empty).
            let ask = ready & (free != 0);
            req[i] = free & u64::from(ask).wrapping_neg();
            asking |= u64::from(ask) << i;
        }
        if asking == 0 {
            return;
        }
        let mut grant = [u8::MAX; NV];
        if asking & (asking - 1) == 0 {
            // One requester: both allocators reduce to its own round-robin pick (for iSLIP
            // every requested output grants it and it accepts the first from its pointer),
            // with the same pointer updates as the general path.
            let i = asking.trailing_zeros() as usize;
            let o = rr_first(req[i], self.va_in[base + i]) as usize;
            grant[i] = o as u8;
            self.va_in[base + i] = ((o + 1) % n) as u8;
            self.va_out[base + o] = ((i + 1) % n) as u8;
        } else {
            allocate::<NV>(
                self.p.vc_alloc,
                &req[..n],
                n,
                &mut self.va_in[base..base + n],
                &mut self.va_out[base..base + n],
                &mut grant,
            );
        }
        while asking != 0 {
            let i = asking.trailing_zeros() as usize;
            asking &= asking - 1;
            if grant[i] != u8::MAX {
                let ivc = base + i;
                let ovc = grant[i] as usize;
                self.ovc_busy[r] |= 1 << ovc;
                self.ivcs[ivc].st = ACTIVE;
                self.routing_mask[r] &= !(1 << i);
                if self.ivcs[ivc].len > 0 {
                    self.sa_mask[r] |= 1 << i;
                }
                self.ivcs[ivc].ovc = (ovc % v) as u8;
                self.ivcs[ivc].ready = self.sh.now + self.p.vc_alloc_delay;
            }
        }
    }

    /// Switch allocation and traversal at router `r`.
    ///
    /// The arrays it touches are taken once as local slices: with `&mut self` the compiler
    /// reloads each `Vec`'s pointer and length after every store, which cost ≈ 10 % of all
    /// instructions; a head that follows a departing tail is routed after the loop (it touches
    /// only its own VC and packet, so the order does not matter).
    #[inline(always)]
    pub(super) fn switch_allocate<const V: usize, const PART: bool>(&mut self, r: usize) {
        let v = V;
        let base = r * P;
        let ovc_base = r * P * v;
        let now = self.sh.now;
        let b = self.p.buf;
        let ivcs = &mut self.ivcs[..];
        let credits = &mut self.sh.credits[..];
        let mut sa_mask = self.sa_mask[r];
        let mut req = [0u8; 8];
        // Per input port: its ready VCs, byte `o` holding those bound for output o.
        let mut by_out = [0u64; 8];
        let mut inputs = 0u64; // input ports with a ready VC
        let mut bits = sa_mask;
        while bits != 0 {
            let k = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            // Active and holding flits; ready once past its stage delay, with a credit for
            // its output VC (the ejection port's counters never move from `buf`, so they
            // always show one: no test of the port needed).
            let s = ivcs[ovc_base + k];
            let o = s.out as usize;
            // Selects, not a branch: readiness changes from cycle to cycle.
            let ok = (s.ready <= now) & (credits[ovc_base + o * V + s.ovc as usize] > 0);
            req[(k / v) & 7] |= u8::from(ok) << o;
            by_out[(k / v) & 7] |= u64::from(ok) << (o * 8 + k % v);
            inputs |= u64::from(ok) << (k / v);
        }
        if inputs == 0 {
            return;
        }
        // Byte i of `grant`: the output granted to input i (for the inputs in `granted`).
        let (granted, grant) = if inputs & (inputs - 1) == 0 {
            // A single requesting input port: both allocators reduce to its own round-robin
            // pick, with the same pointer updates (a fast path, not a different policy).
            let i = inputs.trailing_zeros() as usize;
            let rp = &mut self.rp[r];
            let o = rr_first(u64::from(req[i]), rp.sa_in[i & 7]) as usize;
            rp.sa_in[i & 7] = ((o + 1) % P) as u8;
            rp.sa_out[o & 7] = ((i + 1) % P) as u8;
            (inputs, (o as u64) << (8 * i))
        } else if self.p.sw_alloc == AllocKind::RoundRobin {
            let rp = &mut self.rp[r];
            rr_allocate5(&req, &mut rp.sa_in, &mut rp.sa_out)
        } else {
            let rp = &mut self.rp[r];
            islip_allocate5(&req, &mut rp.sa_in, &mut rp.sa_out)
        };
        let buf = &self.buf[..];
        let rp = &mut self.rp[r];
        let measuring = u64::from(self.sh.measuring);
        let (cred_at, flit_at) = (now + self.p.credit_delay, now + self.fdelay as u64);
        let creds = &mut self.sh.creds[cred_at as usize & self.sh.ring_mask];
        let at = flit_at as usize & self.sh.ring_mask;
        let (flits, ejects) = (&mut self.sh.flits[at], &mut self.sh.ejects[at]);
        // Flits and credits for routers of other partitions (never in a whole network).
        let (sent_flits, sent_creds) = (&mut self.sh.sent_flits, &mut self.sh.sent_creds);
        let mut ovc_busy = self.ovc_busy[r];
        let mut reroute = 0u64;
        // Granted inputs in increasing order, as before.
        let mut gbits = granted;
        while gbits != 0 {
            // Port indices masked to 0..8: the arrays have eight entries, no bounds checks.
            let i = gbits.trailing_zeros() as usize & 7;
            gbits &= gbits - 1;
            let o = (grant >> (8 * i)) as usize & 7;
            let ip = base + i;
            // Which of input i's ready VCs bound for o goes: round robin.
            let mask = by_out[i] >> (o * 8) & 0xff;
            let w = rr_first(mask, rp.sa_vc[i]) as usize;
            rp.sa_vc[i] = if w + 1 == v { 0 } else { (w + 1) as u8 };
            let ivc = ip * v + w;
            let s = &mut ivcs[ivc];
            let f = buf[ivc * b + s.head as usize];
            let h = s.head as usize + 1;
            s.head = if h == b { 0 } else { h as u8 };
            s.len -= 1;
            // Credit back upstream, for the VC this flit occupied here.
            let counter = rp.cred_to[i] + w as u32;
            if !PART || counter & REMOTE == 0 {
                creds.push(counter);
            } else {
                sent_creds.push((cred_at, counter));
            }
            let out_vc = s.ovc;
            let op = base + o;
            // The ejection port has no credits: its counter is left alone (without a branch).
            credits[op * v + out_vc as usize] -= u8::from(o != LOCAL);
            let target = rp.down[o] + u32::from(out_vc);
            let q = if o == LOCAL {
                &mut *ejects
            } else {
                &mut *flits
            };
            if !PART || o == LOCAL || target & REMOTE == 0 {
                q.push(event(target, f));
            } else {
                sent_flits.push((flit_at, event(target, f)));
            }
            rp.busy[o] += measuring;
            // The tail frees the output VC and the input VC; a head behind it is routed after
            // the loop. All by selects: which flit is a tail is hard to predict.
            let tail = f & u32::from(TAIL) != 0;
            ovc_busy &= !(u64::from(tail) << (o * v + out_vc as usize));
            s.st &= u8::from(tail).wrapping_sub(1); // IDLE (0) after a tail
            // Leaves the SA candidates when empty or done.
            sa_mask &= !(u64::from((s.len == 0) | tail) << (i * v + w));
            reroute |= u64::from(tail & (s.len > 0)) << (i * v + w);
        }
        self.sh.last_move = now;
        self.sa_mask[r] = sa_mask;
        self.ovc_busy[r] = ovc_busy;
        while reroute != 0 {
            let k = reroute.trailing_zeros() as usize;
            reroute &= reroute - 1;
            self.start_routing(r, ovc_base + k, now + 1);
        }
    }
}
