//! Checked simulated time: conversions and sums of [`Ps`] that refuse to wrap.
//!
//! 2^64 ps is 213 days of simulated time. Users can type more than that (a trace of 18 447
//! one-thousand-second compute steps, a clock of 10^-3 MHz times 2^36 cycles), and unchecked
//! `u64` arithmetic then wraps silently: 213 days came out as 0.384 ns. Everything here
//! returns [`TimeOverflow`] instead, so a reader of user input can turn it into an input
//! error naming the key or `file:line` *before* the run:
//!
//! * [`ns`], [`cycles`], [`secs`]: one duration from nanoseconds, cycles × cycle time or
//!   seconds (`f64`, e.g. flops / rate);
//! * [`TimeSum`]: a running total of durations (a trace's compute steps) against
//!   [`SUM_LIMIT`], half the clock, so that what the total does not foresee (communication,
//!   waits) still has at least as much room again.
//!
//! A run's own clock then only ever adds durations its input already bounded; where it
//! cannot (a message pipeline), it adds with [`Ps::saturating_add`] and treats reaching
//! [`END`] as the overflow it is.

use crate::Ps;

/// The end of simulated time: a clock that reaches it has overflowed.
pub const END: Ps = Ps::MAX;

/// The most a [`TimeSum`] may reach: half of the clock (106.75 days).
pub const SUM_LIMIT: Ps = Ps::MAX / 2;

/// A duration or sum past what the picosecond clock holds.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error(
    "{:.3} days of simulated time, past the {:.3} days the picosecond clock allows here",
    self.wanted_ps / PS_PER_DAY,
    self.limit as f64 / PS_PER_DAY
)]
pub struct TimeOverflow {
    /// What the duration or sum would have been, in ps (as `f64`: it does not fit a `Ps`;
    /// infinite for a NaN or infinite input).
    pub wanted_ps: f64,
    /// The limit it passed, ps.
    pub limit: Ps,
}

const PS_PER_DAY: f64 = 1e12 * 86_400.0;

fn over(wanted_ps: f64, limit: Ps) -> TimeOverflow {
    TimeOverflow { wanted_ps, limit }
}

/// `n` nanoseconds in ps.
pub fn ns(n: u64) -> Result<Ps, TimeOverflow> {
    n.checked_mul(crate::PS_PER_NS)
        .ok_or_else(|| over(n as f64 * 1e3, END))
}

/// `n` cycles of `cycle_ps` each.
pub fn cycles(n: u64, cycle_ps: Ps) -> Result<Ps, TimeOverflow> {
    n.checked_mul(cycle_ps)
        .ok_or_else(|| over(n as f64 * cycle_ps as f64, END))
}

/// `s` seconds in ps, rounded to the nearest; NaN, negative or too large is an overflow
/// (a negative or NaN duration is no time at all, so a caller reports it as out of range).
pub fn secs(s: f64) -> Result<Ps, TimeOverflow> {
    let ps = (s * 1e12).round();
    // 2^64 is exactly representable; every f64 below it converts without saturating.
    if (0.0..18_446_744_073_709_551_616.0).contains(&ps) {
        Ok(ps as Ps)
    } else {
        Err(over(if ps.is_nan() { f64::INFINITY } else { ps }, END))
    }
}

/// A running total of durations that stays within [`SUM_LIMIT`] (or a limit of its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeSum {
    total: Ps,
    limit: Ps,
}

impl Default for TimeSum {
    fn default() -> Self {
        TimeSum::with_limit(SUM_LIMIT)
    }
}

impl TimeSum {
    pub fn with_limit(limit: Ps) -> TimeSum {
        TimeSum { total: 0, limit }
    }

    /// Adds `d`; on overflow the total is left as it was.
    pub fn add(&mut self, d: Ps) -> Result<Ps, TimeOverflow> {
        match self.total.checked_add(d) {
            Some(t) if t <= self.limit => {
                self.total = t;
                Ok(t)
            }
            _ => Err(over(self.total as f64 + d as f64, self.limit)),
        }
    }

    /// Adds `n` nanoseconds.
    pub fn add_ns(&mut self, n: u64) -> Result<Ps, TimeOverflow> {
        let d = ns(n).map_err(|e| over(self.total as f64 + e.wanted_ps, self.limit))?;
        self.add(d)
    }

    pub fn total(&self) -> Ps {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_refuse_what_the_clock_cannot_hold() {
        assert_eq!(ns(1_000_000_000_000), Ok(1_000_000_000_000_000));
        assert_eq!(ns(u64::MAX / 1000), Ok(u64::MAX / 1000 * 1000));
        assert!(ns(u64::MAX / 1000 + 1).is_err());
        assert_eq!(cycles(1 << 36, 6_250), Ok((1 << 36) * 6_250));
        assert!(cycles(1 << 40, 1 << 30).is_err());
        assert_eq!(secs(1.5), Ok(1_500_000_000_000));
        assert_eq!(secs(0.0), Ok(0));
        for bad in [f64::NAN, -1.0, f64::INFINITY, 1e8, 18_446_744.1] {
            assert!(secs(bad).is_err(), "{bad}");
        }
        assert_eq!(secs(18_446_744.0), Ok(18_446_744_000_000_000_000));
    }

    #[test]
    fn a_sum_stops_at_its_limit_and_keeps_its_total() {
        // The case: 18 447 steps of 1000 s wrapped the clock to 0.384 ns.
        let mut s = TimeSum::default();
        let step = 1_000_000_000_000; // ns
        let fits = SUM_LIMIT / ns(step).unwrap();
        for _ in 0..fits {
            s.add_ns(step).unwrap();
        }
        let before = s.total();
        let e = s.add_ns(step).unwrap_err();
        assert_eq!(s.total(), before);
        assert_eq!(e.limit, SUM_LIMIT);
        assert!(e.to_string().contains("past the 106.752 days"), "{e}");
        assert!(s.add_ns(u64::MAX).is_err());
        let mut tight = TimeSum::with_limit(10);
        assert_eq!(tight.add(10), Ok(10));
        assert!(tight.add(1).is_err());
    }
}
