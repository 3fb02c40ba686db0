//! A wall-time bound on a stall, beside the cycle watchdogs of the cycle-level networks: a
//! network whose `watchdog` allows 2^40 still cycles reported a deadlock after days. Once
//! nothing has moved for [`CHECK_EVERY`] cycles, the clock is read every [`CHECK_EVERY`]
//! further still cycles (never in a cycle where anything moves, so a running network pays
//! one comparison), and a stall that has lasted the `watchdog_wall_s` key's seconds of wall
//! time is a deadlock like one of `watchdog` cycles.
//!
//! Results stay deterministic where a run finishes: the wall bound only ends a run in which
//! nothing moved for that long, which the cycle bound would end later with the same
//! diagnosis (only its cycle differs). Networks spread over MPI ranks agree on the verdict
//! collectively (every rank reaches the check in the same cycle).

use crate::config::Invalid;
use std::time::{Duration, Instant};

/// Still cycles between two readings of the clock (a power of two).
pub const CHECK_EVERY: u64 = 4096;
/// The `watchdog_wall_s` keys' default: a minute of wall time with nothing moving.
pub const DEFAULT_WALL_S: u64 = 60;
/// The `watchdog_wall_s` keys' range.
pub const WALL_S_RANGE: std::ops::RangeInclusive<u64> = 1..=86_400;
/// [`WALL_S_RANGE`] in words, for key tables and messages.
pub const WALL_S_RANGE_TEXT: &str = "1 ..= 86400 s of wall time";

/// Checks a `watchdog_wall_s` value against [`WALL_S_RANGE`].
pub fn check_wall_s(seconds: u64) -> Result<(), Invalid> {
    Invalid::check(
        WALL_S_RANGE.contains(&seconds),
        "watchdog_wall_s",
        WALL_S_RANGE_TEXT,
        seconds,
    )
}

/// The wall-clock side of a watchdog: when the current stall was first seen.
#[derive(Clone, Debug, Default)]
pub struct StallClock {
    /// The cycle things last moved, for the stall being timed.
    moved: u64,
    since: Option<Instant>,
}

impl StallClock {
    /// Whether the stall since cycle `moved` (`still` cycles ago) has lasted `limit_s`
    /// seconds of wall time. Cheap unless `still` is a non-zero multiple of [`CHECK_EVERY`].
    #[inline(always)]
    pub fn expired(&mut self, moved: u64, still: u64, limit_s: u64) -> bool {
        still != 0 && still & (CHECK_EVERY - 1) == 0 && self.look(moved, limit_s)
    }

    #[cold]
    #[inline(never)]
    fn look(&mut self, moved: u64, limit_s: u64) -> bool {
        let now = Instant::now();
        match self.since {
            Some(t) if self.moved == moved => now.duration_since(t) >= Duration::from_secs(limit_s),
            _ => {
                self.moved = moved;
                self.since = Some(now);
                false
            }
        }
    }
}

/// The message of a stall ended by the wall bound.
pub fn wall_message(limit_s: u64, still: u64) -> String {
    format!(
        "nothing moved for {limit_s} s of wall time ({still} cycles; watchdog_wall_s = {limit_s})"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_expires_after_its_wall_time_and_a_move_restarts_it() {
        let mut c = StallClock::default();
        // Not a check point: the clock is not read.
        assert!(!c.expired(10, 5, 0));
        assert!(c.since.is_none());
        // First check point of the stall since cycle 10: starts the clock.
        assert!(!c.expired(10, CHECK_EVERY, 0));
        // A limit of 0 s is reached at the next check point of the same stall.
        assert!(c.expired(10, 2 * CHECK_EVERY, 0));
        assert!(!c.expired(10, 2 * CHECK_EVERY, 3600));
        // Something moved at cycle 20: a new stall, timed from its first check point.
        assert!(!c.expired(20, CHECK_EVERY, 0));
        assert!(c.expired(20, 3 * CHECK_EVERY, 0));
    }
}
