//! The exact fast path of [`XNet`]: a frame streaming on an established path is frozen
//! until its next event, then thawed where stepping would have left it.
//!
//! **When a stream's future is known.** Take an X-NIA sending a frame, every switch on the
//! frame's path bound to it (`Tran`, not stopped), every line slot on the path holding a
//! frame symbol and every FIFO on it below its STOP threshold with no flow-control
//! character owed or under way. Then each cycle the source sends one symbol, every FIFO on
//! the path takes one in and gives one out (its fill does not change), and the destination
//! NIA takes one: the path is a shift register. Read downstream first — the last line
//! (oldest slot first), the last FIFO (front first), the line before it, …, the first FIFO,
//! the first line — it is a *window* `S`; `k` cycles later the window is
//! `(S ++ next k frame symbols)[k..]` cut into the same lines and FIFOs, and the
//! destination has received `(S ++ …)[..k]`. Nothing else in the network reads or writes
//! the path meanwhile (its inputs are bound, so no other output polls them), except the
//! flow control of the links' *reverse* directions, which could steal a slot of the path:
//! a reverse FIFO gains at most one symbol per cycle and loses at most two (an EOF forwarded
//! and the next head granted), so its distance to the threshold it could cross bounds the
//! jump.
//!
//! **Until when.** The first of: the source's frame ends (it would then start another); an
//! `ID-EOF` in the window reaches the output (or the NIA) that consumes it; a reverse FIFO
//! could reach its STOP (or, stopped, its GO) threshold. Until then the path's ports,
//! channels and source are left out of [`XNet::step`]; at that cycle (or earlier, when
//! `measuring` changes) the window is written back, the source's and destination's frames
//! advanced and the path's busy counters added. Every metric and delivery time equals
//! stepping's: `jump_tests` compares the two on random workloads, and shows that a jump one
//! symbol off fails the comparison.

use super::{NONE, XNet};
use crate::outport::OutState;
use crate::symbol::{PORTS, Port, Symbol};
use std::borrow::Cow;

/// Shorter jumps cost more to set up than they save.
const MIN_JUMP: u64 = 4;
/// Cycles before another look at a source whose stream could not be frozen.
const RETRY: u64 = 8;

/// A frozen stream: NIA `src`'s frame on its path to NIA `dst`.
#[derive(Debug)]
struct Stream {
    src: usize,
    dst: usize,
    /// Per hop, upstream first: (input port, output port bound to it).
    hops: Vec<(usize, usize)>,
    /// The window `S` at `since`, downstream first (see the module doc).
    window: Vec<Symbol>,
    since: u64,
    until: u64,
}

/// The fast path's state inside an [`XNet`].
#[derive(Debug, Default)]
pub(crate) struct Jumps {
    /// Off in partitions (a path may cross them) and when a test wants plain stepping.
    pub(crate) enabled: bool,
    streams: Vec<Stream>,
    /// Output ports left out of the step (on a frozen path).
    pub(crate) port: Vec<bool>,
    /// Source NIAs left out of the step.
    pub(crate) nia: Vec<bool>,
    retry_at: Vec<u64>,
    next_thaw: u64,
    /// `measuring` while the frozen streams were frozen (a change thaws them all).
    measuring: bool,
    scratch: Vec<Symbol>,
    /// Stream-cycles jumped so far (how much the fast path saved).
    pub(crate) jumped: u64,
    /// Test only: a thaw moves the stream this many symbols too far (a wrong jump, which
    /// the conformance test must catch).
    #[cfg(test)]
    pub(crate) skew: usize,
}

impl Jumps {
    pub(crate) fn new(enabled: bool, nports: usize, nias: usize) -> Jumps {
        Jumps {
            enabled,
            port: vec![false; nports],
            nia: vec![false; nias],
            retry_at: vec![0; nias],
            ..Jumps::default()
        }
    }

    /// Whether some stream is frozen (a symbol moves on it every cycle).
    #[inline]
    pub(crate) fn any(&self) -> bool {
        !self.streams.is_empty()
    }
}

/// A symbol that belongs to a frame (not an empty slot or flow control).
fn frame_symbol(s: Symbol) -> bool {
    s != Symbol::IDLE && s != Symbol::STOP && s != Symbol::GO
}

impl XNet {
    /// Turns the fast path on or off (on by default in a whole network; partitions step).
    /// Off, every cycle is stepped; the results are the same.
    pub fn set_fast_path(&mut self, on: bool) {
        self.thaw_all();
        self.jump.enabled = on && self.remote_to.is_empty();
    }

    /// Before cycle `now`'s receive phase: thaws the streams whose event is due (all of
    /// them when `measuring` changed), then freezes the streams that can be.
    pub(super) fn jump_before_step(&mut self) {
        if self.jump.any() {
            if self.measuring != self.jump.measuring {
                self.thaw_all();
            } else if self.now >= self.jump.next_thaw {
                self.thaw_due();
            }
        }
        self.jump.measuring = self.measuring;
        for n in 0..self.nias.len() {
            if !self.jump.nia[n]
                && self.now >= self.jump.retry_at[n]
                && self.nias[n].mid_frame()
                && !self.nias[n].stopped
            {
                match self.stream_from(n) {
                    Some(s) if s.until >= self.now + MIN_JUMP => self.freeze(s),
                    s => {
                        let wait = s.map_or(RETRY, |s| (s.until - self.now).max(RETRY));
                        self.jump.retry_at[n] = self.now + wait;
                    }
                }
            }
        }
    }

    /// Writes every frozen stream back (the state stepping would have at `now`).
    pub(crate) fn thaw_all(&mut self) {
        while let Some(s) = self.jump.streams.pop() {
            self.thaw(s);
        }
    }

    fn thaw_due(&mut self) {
        let mut k = 0;
        while k < self.jump.streams.len() {
            if self.jump.streams[k].until <= self.now {
                let s = self.jump.streams.swap_remove(k);
                self.thaw(s);
            } else {
                k += 1;
            }
        }
        self.jump.next_thaw = self.jump.streams.iter().map(|s| s.until).min().unwrap_or(0);
    }

    /// Whether slot `slot` of channel `c` holds a symbol sent in the last `link_delay`
    /// cycles (a slot keeps its last symbol after delivery; the pending bits tell).
    fn sent_into(&self, c: usize, slot: usize) -> bool {
        self.lpend[slot * self.lwords + c / 64] & (1 << (c % 64)) != 0
    }

    /// NIA `n`'s stream and how long it may be frozen, if its future is known now.
    fn stream_from(&self, n: usize) -> Option<Stream> {
        let d = self.p.link_delay;
        let now = self.now;
        let nports = self.nports;
        let (stop_at, go_at) = (self.p.stop_threshold, self.p.go_threshold);
        let slot0 = (now % d as u64) as usize;
        let frozen = &self.jump.port;
        let mut until = now + self.nias[n].tx_left().len() as u64;
        let mut hops: Vec<(usize, usize)> = Vec::new();
        let mut c = nports + n;
        let dst = loop {
            if (0..d).any(|q| !self.sent_into(c, q) || !frame_symbol(self.line[c * d + q])) {
                return None;
            }
            let to = self.dest[c];
            if to == NONE {
                return None;
            }
            let i = to as usize;
            if i >= nports {
                break i - nports;
            }
            let fill = self.fifo[i].len();
            if !self.bound[i]
                || self.fc[i].pending()
                || self.fc[i].told_stop()
                || fill + 1 >= stop_at
                || hops.len() >= nports
            {
                return None;
            }
            // The flow control for the sender into `i` travels on channel `i` (a frozen
            // channel carries frame symbols only).
            if !frozen[i]
                && (0..d).any(|q| {
                    self.sent_into(i, q)
                        && matches!(self.line[i * d + q], Symbol::STOP | Symbol::GO)
                })
            {
                return None;
            }
            let base = i - i % PORTS;
            let me = (i % PORTS) as Port;
            let o = (base..base + PORTS).find(|&o| self.fsm[o].state == OutState::Tran(me))?;
            // FIFO `o` (the reverse direction) sends its flow control on channel `o`.
            let (rev, lr) = (&self.fc[o], self.fifo[o].len());
            if self.stopped[o] || rev.pending() {
                return None;
            }
            // At most one symbol arrives per cycle, but two may leave (an output forwards
            // an EOF, another grants the next frame's head in the same cycle).
            let room = if rev.told_stop() {
                lr.checked_sub(go_at + 1)? / 2
            } else {
                (stop_at - 1).saturating_sub(lr)
            };
            until = until.min(now + room as u64);
            hops.push((i, o));
            c = o;
        };
        // The window, downstream first; an EOF ends the jump when its consumer (the
        // destination, or the output popping that FIFO) would take it.
        let mut window = Vec::new();
        let line = |c: usize, w: &mut Vec<Symbol>| {
            w.extend((0..d).map(|q| self.line[c * d + (slot0 + q) % d]));
        };
        line(hops.last()?.1, &mut window);
        for j in (0..hops.len()).rev() {
            let start = window.len();
            window.extend(self.fifo[hops[j].0].iter());
            let feed = if j == 0 { nports + n } else { hops[j - 1].1 };
            line(feed, &mut window);
            for (e, &s) in window.iter().enumerate().skip(start) {
                if s == Symbol::EOF {
                    until = until.min(now + (e - start) as u64);
                }
            }
            if j + 1 == hops.len() {
                // The last line's EOFs go to the destination (consumer index 0).
                for (e, &s) in window[..start].iter().enumerate() {
                    if s == Symbol::EOF {
                        until = until.min(now + e as u64);
                    }
                }
            }
        }
        Some(Stream {
            src: n,
            dst,
            hops,
            window,
            since: now,
            until,
        })
    }

    fn freeze(&mut self, s: Stream) {
        eprintln!(
            "freeze t={} src={} dst={} hops={:?} fills={:?} until={} left={}",
            self.now,
            s.src,
            s.dst,
            s.hops,
            s.hops
                .iter()
                .map(|h| self.fifo[h.0].len())
                .collect::<Vec<_>>(),
            s.until,
            self.nias[s.src].tx_left().len()
        );
        let d = self.p.link_delay;
        let lw = self.lwords;
        let mut clear = |c: usize| {
            for slot in 0..d {
                self.lpend[slot * lw + c / 64] &= !(1 << (c % 64));
            }
        };
        clear(self.nports + s.src);
        for &(_, o) in &s.hops {
            clear(o);
            self.jump.port[o] = true;
        }
        self.jump.nia[s.src] = true;
        if !self.jump.any() || s.until < self.jump.next_thaw {
            self.jump.next_thaw = s.until;
        }
        self.jump.streams.push(s);
    }

    /// Writes stream `s` back as stepping would have left it at `now`.
    fn thaw(&mut self, s: Stream) {
        let d = self.p.link_delay;
        let now = self.now;
        let lw = self.lwords;
        let slot0 = (now % d as u64) as usize;
        #[allow(unused_mut)]
        let mut e = (now - s.since) as usize;
        #[cfg(test)]
        {
            e += self.jump.skew;
        }
        let mut stream = std::mem::take(&mut self.jump.scratch);
        stream.clear();
        stream.extend_from_slice(&s.window);
        let left = self.nias[s.src].tx_left();
        let e = e.min(left.len());
        stream.extend_from_slice(&left[..e]);
        self.nias[s.dst].receive_within_frame(&stream[..e]);
        self.nias[s.src].advance_tx(e);
        let w = &stream[e..];
        eprintln!("thaw t={} src={} e={}", now, s.src, e);
        // Written back in the window's order: last line, last FIFO, …, first line.
        let mut at = 0;
        let put_line = |net: &mut XNet, c: usize, at: &mut usize| {
            for q in 0..d {
                let slot = (slot0 + q) % d;
                net.line[c * d + slot] = w[*at + q];
                net.lpend[slot * lw + c / 64] |= 1 << (c % 64);
            }
            *at += d;
        };
        put_line(self, s.hops.last().expect("a path has a hop").1, &mut at);
        for j in (0..s.hops.len()).rev() {
            let i = s.hops[j].0;
            let fill = self.fifo[i].len();
            self.fifo[i].replace(&w[at..at + fill]);
            at += fill;
            let feed = if j == 0 {
                self.nports + s.src
            } else {
                s.hops[j - 1].1
            };
            put_line(self, feed, &mut at);
        }
        debug_assert_eq!(at, s.window.len());
        for &(_, o) in &s.hops {
            self.jump.port[o] = false;
        }
        self.jump.nia[s.src] = false;
        self.jump.retry_at[s.src] = now;
        self.jump.jumped += e as u64;
        if e > 0 {
            self.last_move = self.last_move.max(now - 1);
            if self.jump.measuring {
                self.counters.busy[self.nports + s.src] += e as u64;
                for &(_, o) in &s.hops {
                    self.counters.busy[o] += e as u64;
                }
            }
        }
        self.jump.scratch = stream;
    }

    /// The counters as stepping would have them now (frozen streams' symbols included).
    pub fn counters_now(&self) -> Cow<'_, crate::xswitch::Counters> {
        if !self.jump.any() || !self.jump.measuring {
            return Cow::Borrowed(&self.counters);
        }
        let mut c = self.counters.clone();
        for s in &self.jump.streams {
            let e = self.now - s.since;
            c.busy[self.nports + s.src] += e;
            for &(_, o) in &s.hops {
                c.busy[o] += e;
            }
        }
        Cow::Owned(c)
    }
}
