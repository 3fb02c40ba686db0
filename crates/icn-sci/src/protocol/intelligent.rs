//! Intelligent A/B aging: NOTIFY generation, the Serve Status Table and the hold-back rule.
//!
//! A receiver posts a NOTIFY whenever its serve state changes; every node keeps a Serve Status
//! Table (SST) of the last state it heard from each node, and its transmitter holds back a
//! send whose phase the target would refuse in that state:
//!
//! | SST state of target | NOTRY / DOTRY | RETRY_A | RETRY_B |
//! |---|---|---|---|
//! | SERVE_NA | send | send | send |
//! | SERVE_A | hold | send | hold |
//! | SERVE_NB | send | send | send |
//! | SERVE_B | hold | hold | send |
//!
//! The receiver still enforces the A/B table, so the SST is only an optimisation: a stale
//! entry costs a Ps-disallow packet (sent too early) or some idle time (held too long), never
//! correctness.

use super::symbol::{Phase, ServeState, StateChange};

/// The hold-back rule (table above): may a send with `phase` go to a target in `state`?
pub fn allowed(state: ServeState, phase: Phase) -> bool {
    match state {
        ServeState::Na | ServeState::Nb => true,
        ServeState::A => phase == Phase::RetryA,
        ServeState::B => phase == Phase::RetryB,
    }
}

/// Largest ring the packed table supports.
pub const MAX_NODES: usize = 64;

/// Serve Status Table: 2 bits per ring node (16 bytes for up to 64 nodes), all SERVE_NA at ring
/// initialisation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sst {
    bits: u128,
}

impl Sst {
    /// All nodes SERVE_NA.
    pub fn new() -> Self {
        Sst { bits: 0 }
    }

    /// Last known state of `node` (< 64).
    pub fn get(&self, node: usize) -> ServeState {
        ServeState::from_bits((self.bits >> (2 * node)) as u8)
    }

    /// Records a NOTIFY from `node`: its state is now `change.to()`.
    pub fn apply(&mut self, node: usize, change: StateChange) {
        let shift = 2 * node;
        self.bits = self.bits & !(3u128 << shift) | u128::from(change.to() as u8) << shift;
    }
}

/// The 2-symbol NOTIFYBUFFER: at most one pending notification; a newer state change replaces
/// one that has not left yet (the newest state wins).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NotifyBuffer {
    pending: Option<StateChange>,
}

impl NotifyBuffer {
    /// Posts a change; returns the change it overwrote, if any.
    pub fn post(&mut self, change: StateChange) -> Option<StateChange> {
        self.pending.replace(change)
    }

    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// Takes the pending change for transmission.
    pub fn take(&mut self) -> Option<StateChange> {
        self.pending.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Phase::*;
    use ServeState::*;

    /// The hold-back table, every cell.
    #[test]
    fn hold_back_table() {
        let rows = [
            (Na, [true, true, true, true]),
            (A, [false, false, true, false]),
            (Nb, [true, true, true, true]),
            (B, [false, false, false, true]),
        ];
        for (state, cells) in rows {
            for (phase, want) in [NoTry, DoTry, RetryA, RetryB].into_iter().zip(cells) {
                assert_eq!(allowed(state, phase), want, "{state:?} {phase:?}");
            }
        }
    }

    #[test]
    fn sst_starts_all_na_and_tracks_each_node_separately() {
        let mut sst = Sst::new();
        assert!((0..MAX_NODES).all(|j| sst.get(j) == Na));
        sst.apply(63, StateChange::from(Na));
        sst.apply(0, StateChange::from(Nb));
        sst.apply(5, StateChange::from(A));
        assert_eq!(
            (sst.get(63), sst.get(0), sst.get(5), sst.get(1)),
            (A, B, Nb, Na)
        );
        sst.apply(0, StateChange::from(B));
        assert_eq!(sst.get(0), Na);
        assert_eq!(sst.get(63), A);
        assert_eq!(std::mem::size_of::<Sst>(), 16);
    }

    #[test]
    fn notify_buffer_newest_wins() {
        let mut b = NotifyBuffer::default();
        assert_eq!(b.post(StateChange::from(Na)), None);
        assert_eq!(b.post(StateChange::from(A)), Some(StateChange::from(Na)));
        assert_eq!(b.take(), Some(StateChange::from(A)));
        assert!(!b.is_pending());
        assert_eq!(b.take(), None);
    }
}
