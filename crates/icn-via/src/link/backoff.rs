//! How a wait on a polling link spends its time: spin, then yield, then block (sans-IO).
//!
//! Spinning is the fastest way to catch a reply *if the peer runs on another CPU*: on a quiet
//! machine a small message's round trip is a fraction of a microsecond, far below the cost of
//! a sleep and a wake-up. It is the worst thing to do when the peer needs the CPU the waiter
//! spins on: two processes sharing one core (pinned there with `taskset`, or placed together
//! by a busy scheduler) then take turns at time-slice granularity, each burning its whole
//! slice before the other can answer (124 µs per message measured before this policy, against
//! ~0.15 µs on two cores). So a wait:
//!
//! | time waited so far | peer last ran on my CPU | what the wait does |
//! |---|---|---|
//! | `< spin` | no | poll (no system call) |
//! | `< spin` | yes | poll once, then `sched_yield` (the peer gets the CPU at once) |
//! | `spin ..< spin + YIELD_FOR` | either | poll once, then `sched_yield` (a busy machine's other tasks run; we come back when the scheduler says) |
//! | `≥ spin + YIELD_FOR` | either | block on the futex doorbell (the peer's next write wakes us) |
//!
//! `spin` is the VI attribute [`crate::ViAttributes::spin`] (default [`DEFAULT_SPIN`];
//! `icnlab via --spin-us`); 0 never spins. Where each side runs is published in the shared
//! area (`Ring::set_cpu`, a hint only: a stale or hostile value only changes how we wait).

use std::time::Duration;

/// Default pure-spin budget: a small message's round trip on a quiet machine with room to
/// spare (the slowest 8-byte round trips measured here stay under 10 µs), short enough that a
/// peer descheduled on another core costs at most this much before we give way.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(50);
/// The largest spin budget accepted (a wait spinning longer than this is a bug, not tuning).
pub const MAX_SPIN: Duration = Duration::from_secs(1);
/// How long a wait yields after its spin budget before it blocks. Yielding costs a system
/// call per poll but no wake-up: it keeps the reply latency at the scheduler's speed when
/// the peer is runnable on our CPU, and bounds the CPU burned when nothing comes.
pub const YIELD_FOR: Duration = Duration::from_micros(150);

/// What a waiting loop should do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Poll again without a system call.
    Spin,
    /// Poll, then give the CPU away (`sched_yield`).
    Yield,
    /// Block until the peer rings the doorbell (or a time slice passes).
    Block,
}

/// The waiting policy of one link (the table in the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub spin: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { spin: DEFAULT_SPIN }
    }
}

impl Backoff {
    /// The step after waiting `elapsed`, given whether the peer shares our CPU.
    pub fn step(&self, elapsed: Duration, peer_shares_cpu: bool) -> Step {
        if elapsed < self.spin && !peer_shares_cpu {
            Step::Spin
        } else if elapsed < self.spin + YIELD_FOR {
            Step::Yield
        } else {
            Step::Block
        }
    }

    /// True if a wait should start with clock-free polling at all (the engine's and the
    /// link's fast paths): only when spinning is the policy's first step.
    pub fn spins_first(&self, peer_shares_cpu: bool) -> bool {
        self.step(Duration::ZERO, peer_shares_cpu) == Step::Spin
    }

    /// Clock-free polls a wait may make before it reads the clock: about 10 ns each, so a
    /// small budget is not overrun by the fast path (4096 polls, ~20-40 µs, is the cap).
    pub fn clock_free_polls(&self) -> u32 {
        (self.spin.as_nanos() / 10).min(4096) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: fn(u64) -> Duration = Duration::from_micros;

    #[test]
    fn every_row_of_the_table() {
        let b = Backoff { spin: US(50) };
        // row 1: inside the budget, peer elsewhere: spin
        assert_eq!(b.step(US(0), false), Step::Spin);
        assert_eq!(b.step(US(49), false), Step::Spin);
        // row 2: inside the budget, peer on our CPU: yield at once
        assert_eq!(b.step(US(0), true), Step::Yield);
        assert_eq!(b.step(US(49), true), Step::Yield);
        // row 3: budget spent, yield window: yield either way
        assert_eq!(b.step(US(50), false), Step::Yield);
        assert_eq!(b.step(US(199), true), Step::Yield);
        // row 4: both spent: block
        assert_eq!(b.step(US(200), false), Step::Block);
        assert_eq!(b.step(US(200), true), Step::Block);
        assert_eq!(b.step(Duration::from_secs(5), false), Step::Block);
    }

    #[test]
    fn a_zero_budget_never_spins_and_the_fast_path_follows_the_policy() {
        let none = Backoff {
            spin: Duration::ZERO,
        };
        assert_eq!(none.step(US(0), false), Step::Yield);
        assert!(!none.spins_first(false));
        assert_eq!(none.clock_free_polls(), 0);
        let dflt = Backoff::default();
        assert!(dflt.spins_first(false));
        assert!(!dflt.spins_first(true), "a peer on our CPU: no fast path");
        assert_eq!(dflt.clock_free_polls(), 4096, "capped");
        assert_eq!(Backoff { spin: US(1) }.clock_free_polls(), 100);
    }
}
