//! Input-queue allocation at the receiver: one state machine per input queue.
//!
//! A/B aging (IEEE 1596-1992), from spec/sci.md; `space` = the input queue can take the packet:
//!
//! | state | arriving phase | space | echo | next |
//! |---|---|---|---|---|
//! | SERVE_NA | any | yes | DONE | NA |
//! | SERVE_NA | any | no | BUSY_A | SERVE_A |
//! | SERVE_A | RETRY_A | yes | DONE | SERVE_NB when the A generation is served, else A |
//! | SERVE_A | RETRY_A | no | BUSY_A | A |
//! | SERVE_A | NOTRY, DOTRY, RETRY_B | any (even with space) | BUSY_B | A |
//! | SERVE_NB | any | yes | DONE | NB |
//! | SERVE_NB | any | no | BUSY_B | SERVE_B |
//! | SERVE_B | RETRY_B | yes | DONE | SERVE_NA when the B generation is served, else B |
//! | SERVE_B | RETRY_B | no | BUSY_B | B |
//! | SERVE_B | NOTRY, DOTRY, RETRY_A | any | BUSY_A | B |
//!
//! **Reservations.** The receiver counts, per tag, the sends that currently hold a reservation
//! here: a send takes an A reservation when it is busied with BUSY_A, keeps it while it is
//! re-busied with BUSY_A, and gives it up when it arrives with RETRY_A and is accepted or
//! busied with the other tag (symmetrically for B). Since only this receiver busies sends
//! addressed to it, the count equals the number of sends to it with phase RETRY_A.
//!
//! **Generation end.** `Counted` (default): SERVE_A ends when the A count reaches 0.
//! `QuietWindow(W)`: SERVE_A ends after W cycles without a RETRY_A arrival (checked by
//! [`Receiver::tick`]); sends of the old generation still outstanding are then served like
//! anyone else.
//!
//! **Policies.** `Ab` is the table. `NoAging` is plain busy/retry: DONE with space, BUSY_A
//! without, no serve states (it can starve). `CountedAb` follows the table's state changes but
//! accepts a send that does not hold a reservation of the generation being served whenever the
//! free slots exceed the reservations still outstanding (its own excluded), so reserved sends
//! always find room while spare room is not wasted.

use super::symbol::{Echo, Phase, ServeState, StateChange};
use serde::{Deserialize, Serialize};

/// Queue-allocation policy of a receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    NoAging,
    #[default]
    Ab,
    CountedAb,
}

/// When an A (B) generation counts as served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GenerationEnd {
    /// When the reservation count of the generation reaches 0.
    Counted,
    /// After this many cycles with no RETRY_x arrival.
    QuietWindow(u64),
}

/// The receiver's answer to one arriving send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub echo: Echo,
    /// The serve-state change this arrival caused (intelligent receivers NOTIFY it).
    pub change: Option<StateChange>,
    /// The send was refused only because its phase is not the one being served
    /// (SERVE_A with phase ≠ RETRY_A, SERVE_B with phase ≠ RETRY_B): a Ps-disallow packet.
    pub ps_disallow: bool,
}

/// Queue-allocation state of one input queue.
#[derive(Clone, Debug)]
pub struct Receiver {
    policy: Policy,
    end: GenerationEnd,
    state: ServeState,
    reserved_a: u32,
    reserved_b: u32,
    /// Cycle of the last RETRY_x arrival of the generation being served (or of entering it).
    last_retry: u64,
}

impl Receiver {
    pub fn new(policy: Policy, end: GenerationEnd) -> Self {
        Receiver {
            policy,
            end,
            state: ServeState::Na,
            reserved_a: 0,
            reserved_b: 0,
            last_retry: 0,
        }
    }

    pub fn state(&self) -> ServeState {
        self.state
    }

    /// Outstanding (A, B) reservations.
    pub fn reservations(&self) -> (u32, u32) {
        (self.reserved_a, self.reserved_b)
    }

    /// A send with `phase` arrives while the input queue has `free` free slots
    /// (`usize::MAX` for an unbounded queue) at cycle `now`.
    pub fn on_send(&mut self, phase: Phase, free: usize, now: u64) -> Decision {
        let space = free > 0;
        // The arriving send gives up the reservation it holds; it takes one again below if it
        // is busied.
        match phase {
            Phase::RetryA => self.reserved_a = self.reserved_a.saturating_sub(1),
            Phase::RetryB => self.reserved_b = self.reserved_b.saturating_sub(1),
            Phase::NoTry | Phase::DoTry => {}
        }
        let outstanding = self.reserved_a as usize + self.reserved_b as usize;
        let before = self.state;
        let (echo, ps_disallow) = match (self.policy, self.state) {
            (Policy::NoAging, _) => (if space { Echo::Done } else { Echo::BusyA }, false),
            (_, ServeState::Na) | (_, ServeState::Nb) => {
                let reserved = matches!(phase, Phase::RetryA | Phase::RetryB);
                let accept = match self.policy {
                    Policy::CountedAb if !reserved => free > outstanding,
                    _ => space,
                };
                if accept {
                    (Echo::Done, false)
                } else if self.state == ServeState::Na {
                    self.enter(ServeState::A, now);
                    (Echo::BusyA, false)
                } else {
                    self.enter(ServeState::B, now);
                    (Echo::BusyB, false)
                }
            }
            (_, served @ (ServeState::A | ServeState::B)) => {
                let (own, busy_own, busy_other) = if served == ServeState::A {
                    (Phase::RetryA, Echo::BusyA, Echo::BusyB)
                } else {
                    (Phase::RetryB, Echo::BusyB, Echo::BusyA)
                };
                if phase == own {
                    self.last_retry = now;
                    (if space { Echo::Done } else { busy_own }, false)
                } else if self.policy == Policy::CountedAb && free > outstanding {
                    (Echo::Done, false)
                } else {
                    (busy_other, true)
                }
            }
        };
        match echo {
            Echo::BusyA => self.reserved_a += 1,
            Echo::BusyB => self.reserved_b += 1,
            Echo::Done => {}
        }
        if self.end == GenerationEnd::Counted {
            match self.state {
                ServeState::A if self.reserved_a == 0 => self.enter(ServeState::Nb, now),
                ServeState::B if self.reserved_b == 0 => self.enter(ServeState::Na, now),
                _ => {}
            }
        }
        Decision {
            echo,
            change: self.change_since(before),
            ps_disallow,
        }
    }

    /// True when time alone can still change this receiver: it serves a generation that a
    /// quiet window ends ([`Receiver::tick`]).
    pub fn waits_for_time(&self) -> bool {
        matches!(self.end, GenerationEnd::QuietWindow(_))
            && matches!(self.state, ServeState::A | ServeState::B)
    }

    /// Advances time to `now` (quiet-window generation end only; a no-op otherwise).
    pub fn tick(&mut self, now: u64) -> Option<StateChange> {
        let GenerationEnd::QuietWindow(w) = self.end else {
            return None;
        };
        let before = self.state;
        if now.saturating_sub(self.last_retry) >= w {
            match self.state {
                ServeState::A => self.enter(ServeState::Nb, now),
                ServeState::B => self.enter(ServeState::Na, now),
                _ => {}
            }
        }
        self.change_since(before)
    }

    fn enter(&mut self, state: ServeState, now: u64) {
        self.state = state;
        self.last_retry = now;
    }

    /// The change since `before`. One arrival moves at most one step round the cycle:
    /// entering A (B) busies the arriving send, which takes a reservation, so the generation
    /// cannot also end in the same arrival.
    fn change_since(&self, before: ServeState) -> Option<StateChange> {
        (self.state != before).then(|| StateChange::from(before))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Echo::*;
    use Phase::*;
    use ServeState::*;

    fn in_state(policy: Policy, state: ServeState, ra: u32, rb: u32) -> Receiver {
        let mut r = Receiver::new(policy, GenerationEnd::Counted);
        r.state = state;
        r.reserved_a = ra;
        r.reserved_b = rb;
        r
    }

    /// Runs one row: (state, phase, space) → (echo, next state), with enough reservations that
    /// "the generation is served" is false unless `last` says the arriving send is the last one.
    fn row(
        state: ServeState,
        phase: Phase,
        space: bool,
        last: bool,
    ) -> (Echo, ServeState, Decision) {
        let held = if last { 1 } else { 3 };
        let mut r = in_state(Policy::Ab, state, held, held);
        let d = r.on_send(phase, usize::from(space), 100);
        (d.echo, r.state(), d)
    }

    #[test]
    fn table_serve_na() {
        for p in Phase::ALL {
            assert_eq!(row(Na, p, true, false).0, Done, "{p:?}");
            assert_eq!(row(Na, p, true, false).1, Na);
            let (echo, next, d) = row(Na, p, false, false);
            assert_eq!((echo, next), (BusyA, A), "{p:?}");
            assert_eq!(d.change, Some(StateChange::from(Na)));
        }
    }

    #[test]
    fn table_serve_a() {
        // RETRY_A with space: DONE; stays A unless it was the last A reservation.
        assert_eq!(row(A, RetryA, true, false).0, Done);
        assert_eq!(row(A, RetryA, true, false).1, A);
        let (echo, next, d) = row(A, RetryA, true, true);
        assert_eq!(
            (echo, next, d.change),
            (Done, Nb, Some(StateChange::from(A)))
        );
        // RETRY_A without space: BUSY_A, stays A even if it is the last reservation.
        assert_eq!(row(A, RetryA, false, true).0, BusyA);
        assert_eq!(row(A, RetryA, false, true).1, A);
        // Everything else: BUSY_B even with space, and it is a Ps-disallow packet.
        for p in [NoTry, DoTry, RetryB] {
            for space in [true, false] {
                let (echo, next, d) = row(A, p, space, false);
                assert_eq!(
                    (echo, next, d.ps_disallow),
                    (BusyB, A, true),
                    "{p:?} {space}"
                );
            }
        }
    }

    #[test]
    fn table_serve_nb() {
        for p in Phase::ALL {
            assert_eq!(row(Nb, p, true, false).0, Done);
            assert_eq!(row(Nb, p, true, false).1, Nb);
            assert_eq!(row(Nb, p, false, false).0, BusyB);
            assert_eq!(row(Nb, p, false, false).1, B);
        }
    }

    #[test]
    fn table_serve_b() {
        assert_eq!(row(B, RetryB, true, false).0, Done);
        assert_eq!(row(B, RetryB, true, false).1, B);
        assert_eq!(row(B, RetryB, true, true).1, Na);
        assert_eq!(row(B, RetryB, false, true).0, BusyB);
        assert_eq!(row(B, RetryB, false, true).1, B);
        for p in [NoTry, DoTry, RetryA] {
            for space in [true, false] {
                let (echo, next, d) = row(B, p, space, false);
                assert_eq!(
                    (echo, next, d.ps_disallow),
                    (BusyA, B, true),
                    "{p:?} {space}"
                );
            }
        }
    }

    #[test]
    fn dotry_is_treated_like_notry() {
        for state in ServeState::ALL {
            for space in [true, false] {
                let a = row(state, NoTry, space, false);
                let b = row(state, DoTry, space, false);
                assert_eq!((a.0, a.1), (b.0, b.1));
            }
        }
    }

    /// Counted reservations: taken on the first busy, kept across re-busies, released on DONE;
    /// the A generation ends exactly when the last reserved send is accepted.
    #[test]
    fn counted_generation_lifecycle() {
        let mut r = Receiver::new(Policy::Ab, GenerationEnd::Counted);
        assert_eq!(r.on_send(NoTry, 0, 1).echo, BusyA); // x: reservation 1, NA→A
        assert_eq!(r.on_send(NoTry, 0, 2).echo, BusyB); // y: Ps-disallow, B reservation
        assert_eq!(r.reservations(), (1, 1));
        assert_eq!(r.on_send(RetryA, 0, 3).echo, BusyA); // x re-busied keeps its reservation
        assert_eq!(r.reservations(), (1, 1));
        let d = r.on_send(RetryA, 1, 4); // x accepted: A served
        assert_eq!((d.echo, r.state()), (Done, Nb));
        assert_eq!(r.reservations(), (0, 1));
        assert_eq!(r.on_send(RetryB, 1, 5).echo, Done); // y accepted in NB
        assert_eq!((r.state(), r.reservations()), (Nb, (0, 0)));
    }

    #[test]
    fn b_generation_returns_to_na() {
        let mut r = in_state(Policy::Ab, Nb, 0, 0);
        assert_eq!(r.on_send(NoTry, 0, 1).echo, BusyB);
        assert_eq!(r.state(), B);
        assert_eq!(r.on_send(NoTry, 5, 2).echo, BusyA); // Ps-disallow in B
        let d = r.on_send(RetryB, 1, 3);
        assert_eq!(
            (d.echo, r.state(), d.change),
            (Done, Na, Some(StateChange::from(B)))
        );
        assert_eq!(r.reservations(), (1, 0));
    }

    #[test]
    fn quiet_window_ends_generation_by_time() {
        let mut r = Receiver::new(Policy::Ab, GenerationEnd::QuietWindow(50));
        r.on_send(NoTry, 0, 10); // NA→A at 10
        assert_eq!(r.tick(59), None);
        r.on_send(RetryA, 0, 40); // a RETRY_A at 40 restarts the window
        assert_eq!(r.tick(89), None);
        assert_eq!(r.tick(90), Some(StateChange::from(A)));
        assert_eq!(r.state(), Nb);
        // Accepting the last reservation does not end a quiet-window generation by itself.
        let mut r = Receiver::new(Policy::Ab, GenerationEnd::QuietWindow(50));
        r.on_send(NoTry, 0, 0);
        r.on_send(RetryA, 1, 1);
        assert_eq!(r.state(), A);
        // tick is a no-op for counted receivers.
        assert_eq!(in_state(Policy::Ab, A, 1, 0).tick(1_000_000), None);
    }

    #[test]
    fn no_aging_is_plain_busy_retry() {
        let mut r = Receiver::new(Policy::NoAging, GenerationEnd::Counted);
        for (i, p) in Phase::ALL.into_iter().enumerate() {
            let d = r.on_send(p, 0, i as u64);
            assert_eq!((d.echo, d.change, d.ps_disallow), (BusyA, None, false));
            assert_eq!(r.on_send(p, 1, i as u64).echo, Done);
        }
        assert_eq!(r.state(), Na);
    }

    #[test]
    fn counted_ab_accepts_beyond_reservations() {
        // SERVE_A with 2 A reservations outstanding and 3 free slots: a NOTRY gets in.
        let mut r = in_state(Policy::CountedAb, A, 2, 0);
        assert_eq!(r.on_send(NoTry, 3, 0).echo, Done);
        // ... but not when the free slots only cover the reservations.
        let d = r.on_send(NoTry, 2, 1);
        assert_eq!((d.echo, d.ps_disallow), (BusyB, true));
        // A reserved RETRY_A needs only space.
        let mut r = in_state(Policy::CountedAb, A, 2, 0);
        assert_eq!(r.on_send(RetryA, 1, 2).echo, Done);
        // In NA, other sends must leave room for the outstanding reservations.
        let mut r = in_state(Policy::CountedAb, Na, 2, 0);
        assert_eq!(r.on_send(NoTry, 2, 3).echo, BusyA);
        assert_eq!(r.state(), A);
        assert_eq!(
            in_state(Policy::CountedAb, Na, 2, 0)
                .on_send(NoTry, 3, 3)
                .echo,
            Done
        );
    }
}
