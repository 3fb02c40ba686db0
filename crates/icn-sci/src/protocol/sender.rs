//! The sender's side of queue allocation: phases of a send and the bounded active buffers.
//!
//! | echo received | sender action | next phase |
//! |---|---|---|
//! | DONE | free the active buffer | — |
//! | BUSY_A | keep the copy, retry | RETRY_A |
//! | BUSY_B | keep the copy, retry | RETRY_B |
//!
//! First tries are NOTRY. A node has a bounded number of active buffers: a send occupies one
//! from its first transmission until its DONE echo, so at most `capacity` sends of one node are
//! outstanding (in flight or waiting to be retried).

use super::symbol::{Echo, Phase};

/// What the sender does with its copy after an echo.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EchoOutcome {
    /// DONE: the send is complete, its buffer is free.
    Free,
    /// BUSY_x: transmit again with this phase.
    Retry(Phase),
}

/// The sender's reaction to an echo (the table above).
pub fn on_echo(echo: Echo) -> EchoOutcome {
    match echo {
        Echo::Done => EchoOutcome::Free,
        Echo::BusyA => EchoOutcome::Retry(Phase::RetryA),
        Echo::BusyB => EchoOutcome::Retry(Phase::RetryB),
    }
}

/// State of one active buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotState {
    Free,
    /// Holds a busied send waiting to be retransmitted.
    Ready,
    /// Transmitted, waiting for its echo.
    InFlight,
}

/// One outstanding send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActiveSend {
    pub target: u8,
    /// Index into the configured data sizes.
    pub size_class: u8,
    /// Cycle the send was created (entered the send queue).
    pub created: u64,
    /// Run-wide sequence number (identifies the send in event logs).
    pub seq: u64,
    pub phase: Phase,
    /// Transmissions so far.
    pub transmissions: u32,
    pub state: SlotState,
    /// Order of first transmission among this node's sends (0, 1, 2, ...): the tie-break of
    /// "oldest first" between sends created in the same cycle.
    pub started: u64,
    /// Cycle of this send's latest transmission (first try or retry): a busied send's place in
    /// least-recently-transmitted order (switched rings, `retry_order`).
    pub sent_at: u64,
}

/// Misuse of the active buffers (a simulator bug, reported rather than panicking).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SenderError {
    #[error("echo for active buffer {0}, which has no send in flight")]
    UnexpectedEcho(usize),
    #[error("no free active buffer")]
    Full,
    #[error("active buffer {0} holds no send ready to transmit")]
    NotReady(usize),
}

/// A node's bounded active buffers.
#[derive(Clone, Debug)]
pub struct ActiveBuffers {
    slots: Vec<ActiveSend>,
    free: usize,
    ready: usize,
    started: u64,
}

const EMPTY: ActiveSend = ActiveSend {
    target: 0,
    size_class: 0,
    created: 0,
    seq: 0,
    phase: Phase::NoTry,
    transmissions: 0,
    state: SlotState::Free,
    started: 0,
    sent_at: 0,
};

impl ActiveBuffers {
    pub fn new(capacity: usize) -> Self {
        ActiveBuffers {
            slots: vec![EMPTY; capacity],
            free: capacity,
            ready: 0,
            started: 0,
        }
    }

    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    pub fn free_count(&self) -> usize {
        self.free
    }

    /// Busied sends waiting for retransmission.
    pub fn ready_count(&self) -> usize {
        self.ready
    }

    pub fn is_idle(&self) -> bool {
        self.free == self.slots.len()
    }

    pub fn get(&self, slot: usize) -> &ActiveSend {
        &self.slots[slot]
    }

    pub fn slots(&self) -> &[ActiveSend] {
        &self.slots
    }

    /// Takes a free buffer for a new send (first try, NOTRY) that is transmitted now (cycle
    /// `now`).
    pub fn start(
        &mut self,
        target: u8,
        size_class: u8,
        created: u64,
        seq: u64,
        now: u64,
    ) -> Result<usize, SenderError> {
        let slot = self
            .slots
            .iter()
            .position(|s| s.state == SlotState::Free)
            .ok_or(SenderError::Full)?;
        self.slots[slot] = ActiveSend {
            target,
            size_class,
            created,
            seq,
            phase: Phase::NoTry,
            transmissions: 1,
            state: SlotState::InFlight,
            started: self.started,
            sent_at: now,
        };
        self.started += 1;
        self.free -= 1;
        Ok(slot)
    }

    /// Retransmits the busied send in `slot` at cycle `now`.
    pub fn retransmit(&mut self, slot: usize, now: u64) -> Result<&ActiveSend, SenderError> {
        let s = &mut self.slots[slot];
        if s.state != SlotState::Ready {
            return Err(SenderError::NotReady(slot));
        }
        s.state = SlotState::InFlight;
        s.transmissions += 1;
        s.sent_at = now;
        self.ready -= 1;
        Ok(s)
    }

    /// Applies an echo to the send in `slot`; returns the outcome and a copy of the send as it
    /// was (for delay accounting when it completes).
    pub fn echo(
        &mut self,
        slot: usize,
        echo: Echo,
    ) -> Result<(EchoOutcome, ActiveSend), SenderError> {
        let s = self
            .slots
            .get_mut(slot)
            .filter(|s| s.state == SlotState::InFlight)
            .ok_or(SenderError::UnexpectedEcho(slot))?;
        let before = *s;
        let outcome = on_echo(echo);
        match outcome {
            EchoOutcome::Free => {
                *s = EMPTY;
                self.free += 1;
            }
            EchoOutcome::Retry(phase) => {
                s.phase = phase;
                s.state = SlotState::Ready;
                self.ready += 1;
            }
        }
        Ok((outcome, before))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table in the module doc, row by row.
    #[test]
    fn echo_table() {
        assert_eq!(on_echo(Echo::Done), EchoOutcome::Free);
        assert_eq!(on_echo(Echo::BusyA), EchoOutcome::Retry(Phase::RetryA));
        assert_eq!(on_echo(Echo::BusyB), EchoOutcome::Retry(Phase::RetryB));
    }

    #[test]
    fn first_try_is_notry_and_buffers_are_bounded() {
        let mut b = ActiveBuffers::new(2);
        let s0 = b.start(1, 0, 10, 0, 10).unwrap();
        assert_eq!(b.get(s0).phase, Phase::NoTry);
        b.start(2, 0, 11, 1, 11).unwrap();
        assert_eq!(b.start(3, 0, 12, 2, 12), Err(SenderError::Full));
        assert_eq!(b.free_count(), 0);
    }

    #[test]
    fn first_transmissions_are_numbered_in_order() {
        let mut b = ActiveBuffers::new(2);
        let s0 = b.start(1, 0, 5, 10, 5).unwrap();
        let s1 = b.start(1, 0, 5, 11, 5).unwrap();
        assert_eq!((b.get(s0).started, b.get(s1).started), (0, 1));
        b.echo(s0, Echo::Done).unwrap();
        // The freed slot is reused; the number keeps counting.
        let s2 = b.start(2, 0, 5, 12, 5).unwrap();
        assert_eq!((s2, b.get(s2).started), (s0, 2));
    }

    /// `sent_at` is the cycle of the latest transmission, first try or retry, so the busied
    /// send transmitted longest ago has the smallest `sent_at` whatever its age.
    #[test]
    fn every_transmission_is_time_stamped() {
        let mut b = ActiveBuffers::new(2);
        let old = b.start(1, 0, 5, 10, 7).unwrap();
        let young = b.start(2, 0, 6, 11, 9).unwrap();
        assert_eq!((b.get(old).sent_at, b.get(young).sent_at), (7, 9));
        b.echo(old, Echo::BusyA).unwrap();
        b.echo(young, Echo::BusyB).unwrap();
        b.retransmit(old, 20).unwrap();
        assert_eq!(b.get(old).sent_at, 20);
        b.echo(old, Echo::BusyA).unwrap();
        // Now the younger send is the least recently transmitted.
        assert!(b.get(young).sent_at < b.get(old).sent_at);
        b.retransmit(young, 30).unwrap();
        assert_eq!((b.get(young).sent_at, b.get(young).created), (30, 6));
    }

    #[test]
    fn busy_then_retry_then_done_frees() {
        let mut b = ActiveBuffers::new(1);
        let s = b.start(4, 0, 0, 9, 0).unwrap();
        assert_eq!(b.retransmit(s, 50).err(), Some(SenderError::NotReady(s)));
        let (out, _) = b.echo(s, Echo::BusyB).unwrap();
        assert_eq!(out, EchoOutcome::Retry(Phase::RetryB));
        assert_eq!(b.ready_count(), 1);
        // A second echo before retransmission is a protocol error, not a panic.
        assert_eq!(
            b.echo(s, Echo::Done).err(),
            Some(SenderError::UnexpectedEcho(s))
        );
        assert_eq!(b.retransmit(s, 50).unwrap().phase, Phase::RetryB);
        let (out, was) = b.echo(s, Echo::BusyA).unwrap();
        assert_eq!(
            (out, was.phase),
            (EchoOutcome::Retry(Phase::RetryA), Phase::RetryB)
        );
        b.retransmit(s, 50).unwrap();
        let (out, was) = b.echo(s, Echo::Done).unwrap();
        assert_eq!(out, EchoOutcome::Free);
        assert_eq!(
            (was.transmissions, was.seq, was.phase),
            (3, 9, Phase::RetryA)
        );
        assert!(b.is_idle());
    }
}
