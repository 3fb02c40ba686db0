//! The input port: a symbol FIFO with STOP/GO flow control.
//!
//! Each input port of an X-Switch has a FIFO (paper §2.3). When it is nearly full the
//! receiver inserts `ID-STOP` into the reverse channel; once it has drained it inserts
//! `ID-GO`. The decision is a hysteresis on the fill level:
//!
//! | fill after this cycle's arrival/departure | wanted state |
//! |-------------------------------------------|--------------|
//! | `fill ≥ stop_at`                          | stopped      |
//! | `fill ≤ go_at`                            | going        |
//! | otherwise                                 | unchanged    |
//!
//! A character is emitted only when the wanted state differs from the last one told to the
//! sender, so a STOP is never repeated and a GO never precedes its STOP.
//!
//! ## Why the headroom must be `2·d − 1` symbols
//! With a link delay of `d` cycles per channel, the receiver decides STOP in cycle `t` (the
//! arrival that made `fill = stop_at`) and sends it in the same cycle (flow control has the
//! highest priority, [`crate::outport`]). The sender sees it in cycle `t + d` and sends
//! nothing from then on. Still arriving after cycle `t`: the `d − 1` symbols already on the
//! wire and the `d` the sender sent in cycles `t .. t + d − 1`, so the FIFO may reach
//! `stop_at + 2d − 1`. [`check_thresholds`] rejects configurations without that headroom,
//! and `tests::worst_case_fill_is_exactly_stop_plus_round_trip` measures it.

use crate::symbol::Symbol;
use icn_engine::Invalid;

/// A fixed-capacity ring buffer of symbols (no allocation after construction).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Fifo {
    buf: Box<[Symbol]>,
    head: usize,
    len: usize,
}

/// A push into a full FIFO: the flow control failed. The simulator turns it into an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("FIFO overflow (capacity {capacity})")]
pub struct Overflow {
    pub capacity: usize,
}

impl Fifo {
    pub fn new(capacity: usize) -> Fifo {
        Fifo {
            buf: vec![Symbol::IDLE; capacity.max(1)].into_boxed_slice(),
            head: 0,
            len: 0,
        }
    }

    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn front(&self) -> Option<Symbol> {
        (self.len > 0).then(|| self.buf[self.head])
    }

    pub fn push(&mut self, s: Symbol) -> Result<(), Overflow> {
        let cap = self.buf.len();
        if self.len == cap {
            return Err(Overflow { capacity: cap });
        }
        let mut tail = self.head + self.len;
        if tail >= cap {
            tail -= cap;
        }
        self.buf[tail] = s;
        self.len += 1;
        Ok(())
    }

    pub fn pop(&mut self) -> Option<Symbol> {
        let s = self.front()?;
        self.head += 1;
        if self.head == self.buf.len() {
            self.head = 0;
        }
        self.len -= 1;
        Some(s)
    }
}

/// The receiver side of STOP/GO: decides which flow-control character, if any, goes out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowControl {
    pub stop_at: usize,
    pub go_at: usize,
    want_stop: bool,
    told_stop: bool,
}

impl FlowControl {
    pub fn new(stop_at: usize, go_at: usize) -> FlowControl {
        FlowControl {
            stop_at,
            go_at,
            want_stop: false,
            told_stop: false,
        }
    }

    /// Applies the hysteresis table to the current fill level.
    pub fn observe(&mut self, fill: usize) {
        if fill >= self.stop_at {
            self.want_stop = true;
        } else if fill <= self.go_at {
            self.want_stop = false;
        }
    }

    /// Whether a character is waiting for the next reverse-channel slot.
    pub fn pending(&self) -> bool {
        self.want_stop != self.told_stop
    }

    /// Takes the pending character (the caller puts it in this cycle's slot).
    pub fn take(&mut self) -> Option<Symbol> {
        if !self.pending() {
            return None;
        }
        self.told_stop = self.want_stop;
        Some(if self.want_stop {
            Symbol::STOP
        } else {
            Symbol::GO
        })
    }

    /// Whether the sender has been told to stop (and not yet to go).
    pub fn told_stop(&self) -> bool {
        self.told_stop
    }
}

/// The FIFO headroom above `stop_at` that a link of `link_delay` cycles needs.
pub fn headroom(link_delay: usize) -> usize {
    2 * link_delay - 1
}

/// Rejects thresholds that could let a FIFO overflow, naming the key at fault.
pub fn check_thresholds(
    capacity: usize,
    stop_at: usize,
    go_at: usize,
    link_delay: usize,
) -> Result<(), Invalid> {
    Invalid::check(
        (1..=1024).contains(&link_delay),
        "link_delay",
        "1 ..= 1024 cycles",
        link_delay,
    )?;
    Invalid::check(
        (1..=1 << 20).contains(&capacity),
        "fifo_size",
        "1 ..= 1048576 symbols",
        capacity,
    )?;
    Invalid::check(
        stop_at >= 1 && stop_at + headroom(link_delay) <= capacity,
        "stop_threshold",
        &format!(
            "1 ..= fifo_size − (2·link_delay − 1) = {} (the link round trip must fit above it)",
            capacity as i64 - headroom(link_delay) as i64
        ),
        stop_at,
    )?;
    Invalid::check(
        go_at < stop_at,
        "go_threshold",
        &format!("0 ..= stop_threshold − 1 = {}", stop_at - 1),
        go_at,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_wraps_and_reports_overflow() {
        let mut f = Fifo::new(3);
        for round in 0..5u16 {
            f.push(Symbol::data(round as u8)).unwrap();
            f.push(Symbol::data(100)).unwrap();
            assert_eq!(f.pop(), Some(Symbol::data(round as u8)));
            assert_eq!(f.pop(), Some(Symbol::data(100)));
        }
        for _ in 0..3 {
            f.push(Symbol::EOF).unwrap();
        }
        assert_eq!(f.push(Symbol::EOF), Err(Overflow { capacity: 3 }));
        assert_eq!(f.len(), 3);
    }

    #[test]
    fn hysteresis_table_rows() {
        let mut fc = FlowControl::new(6, 2);
        for (fill, pending) in [(5, None), (6, Some(Symbol::STOP)), (7, None), (3, None)] {
            fc.observe(fill);
            assert_eq!(fc.take(), pending, "fill {fill}");
        }
        assert!(fc.told_stop());
        fc.observe(2);
        assert_eq!(fc.take(), Some(Symbol::GO));
        fc.observe(5);
        assert_eq!(fc.take(), None, "between thresholds after GO: stay going");
        // Flapping inside one cycle leaves nothing to send.
        fc.observe(6);
        fc.observe(1);
        assert_eq!(fc.take(), None);
    }

    /// Drives a sender that transmits every cycle it is allowed to into a receiver that never
    /// drains, with the same phase order as the simulator (receive, then send; the receiver's
    /// flow-control character leaves in the same cycle it is decided). Returns the peak fill.
    fn peak_fill(stop_at: usize, link_delay: usize) -> usize {
        let mut fc = FlowControl::new(stop_at, 0);
        let mut fill = 0;
        let mut forward = vec![false; link_delay]; // data symbols on the wire
        let mut reverse = vec![None; link_delay]; // flow-control characters on the wire
        let mut sender_stopped = false;
        let mut peak = 0;
        for t in 0..50 * link_delay + 50 {
            let slot = t % link_delay;
            if forward[slot] {
                fill += 1;
                fc.observe(fill);
            }
            match reverse[slot] {
                Some(s) if s == Symbol::STOP => sender_stopped = true,
                Some(_) => sender_stopped = false,
                None => {}
            }
            peak = peak.max(fill);
            reverse[slot] = fc.take();
            forward[slot] = !sender_stopped;
        }
        peak
    }

    #[test]
    fn worst_case_fill_is_exactly_stop_plus_round_trip() {
        for d in 1..=6 {
            for stop in [1, 4, 9] {
                assert_eq!(
                    peak_fill(stop, d),
                    stop + headroom(d),
                    "d = {d}, stop = {stop}"
                );
            }
        }
    }

    #[test]
    fn thresholds_without_headroom_are_rejected() {
        assert!(check_thresholds(16, 13, 4, 2).is_ok());
        let e = check_thresholds(16, 14, 4, 2).unwrap_err();
        assert_eq!(e.key, "stop_threshold");
        assert!(e.message.contains("13"), "{e}");
        assert_eq!(
            check_thresholds(16, 8, 8, 1).unwrap_err().key,
            "go_threshold"
        );
        assert_eq!(check_thresholds(16, 8, 2, 0).unwrap_err().key, "link_delay");
        assert_eq!(check_thresholds(0, 8, 2, 1).unwrap_err().key, "fifo_size");
    }
}
