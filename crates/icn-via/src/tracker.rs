//! The send-queue state machine, sans-IO: which posted send-queue descriptors are complete,
//! and with what status, given what the peer said.
//!
//! Descriptors on one work queue complete in the order they were posted (VIA 1.0), so the
//! tracker is a FIFO whose front is released only when it is done.
//!
//! | state of an entry | event | next state |
//! |---|---|---|
//! | (post) unreliable send / RDMA write | transmitted | `Done(Success)` |
//! | (post) reliable send / RDMA write | transmitted | `AwaitAck` |
//! | (post) RDMA read | request transmitted | `AwaitResponse` |
//! | `AwaitAck` with seq ≤ n | `Ack(n)` (cumulative) | `Done(Success)` |
//! | `AwaitResponse` with seq s | `ReadDone(s, st)` | `Done(st)` |
//! | `AwaitAck` with seq < s | `Nak(s, st)` | `Done(Success)`: the peer handles frames in order, so it accepted every frame before the one it refused (their ack may not have been sent yet) |
//! | any not done, seq s | `Nak(s, st)` | `Done(st)`; all later ones not done → `Done(Flushed)`; VI broken |
//! | first not done | `Break` (transport failure) | `Done(TransportError)` |
//! | other not done | `Break` | `Done(Flushed)` |

use std::collections::VecDeque;

use crate::attrs::Reliability;
use crate::descriptor::{Completion, Descriptor, Op};
use crate::error::CompletionStatus;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Track {
    Done(CompletionStatus),
    AwaitAck,
    AwaitResponse,
}

#[derive(Debug)]
struct Entry {
    seq: u32,
    desc: Descriptor,
    track: Track,
}

/// Sequence comparison that survives wrap-around: `a ≤ b` in the window of 2^31.
pub(crate) fn seq_le(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) >= 0
}

/// The FIFO of posted send-queue descriptors.
#[derive(Debug, Default)]
pub struct SendTracker {
    entries: VecDeque<Entry>,
    /// How many front entries no ack can change any more (done, or waiting for a read
    /// response): a cumulative ack scans from here, so a stream of acks costs O(1) each
    /// rather than a scan of the whole queue.
    settled: usize,
}

impl SendTracker {
    /// Number of descriptors posted and not yet reaped.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    /// The ids of the descriptors posted and not yet reaped.
    pub fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.entries.iter().map(|e| e.desc.id)
    }

    /// A descriptor was handed to the wire with sequence number `seq`.
    pub fn transmitted(&mut self, seq: u32, desc: Descriptor, reliability: Reliability) {
        let track = match desc.op {
            Op::RdmaRead(_) => Track::AwaitResponse,
            _ if reliability.is_reliable() => Track::AwaitAck,
            _ => Track::Done(CompletionStatus::Success),
        };
        self.entries.push_back(Entry { seq, desc, track });
    }

    /// A descriptor that failed locally before reaching the wire (e.g. a bad segment): it
    /// completes, in order, with `status`.
    pub fn failed_locally(&mut self, seq: u32, desc: Descriptor, status: CompletionStatus) {
        self.entries.push_back(Entry {
            seq,
            desc,
            track: Track::Done(status),
        });
    }

    /// The peer acknowledges every data frame with sequence ≤ `upto`.
    ///
    /// Entries are in sequence order (sequence numbers are taken in posting order), so the
    /// scan stops at the first entry past `upto`.
    pub fn on_ack(&mut self, upto: u32) {
        while let Some(e) = self.entries.get_mut(self.settled) {
            if !seq_le(e.seq, upto) {
                break;
            }
            if e.track == Track::AwaitAck {
                e.track = Track::Done(CompletionStatus::Success);
            }
            self.settled += 1;
        }
    }

    /// The response to RDMA read `seq` was placed (or refused with `status`).
    pub fn on_read_done(&mut self, seq: u32, status: CompletionStatus) {
        if let Some(e) = self
            .entries
            .iter_mut()
            .find(|e| e.seq == seq && e.track == Track::AwaitResponse)
        {
            e.track = Track::Done(status);
        }
    }

    /// The peer refused frame `seq` with `status`: the frames before it were accepted (an
    /// implied cumulative ack), that descriptor gets the status and every later pending one
    /// is flushed (the VI is broken).
    pub fn on_nak(&mut self, seq: u32, status: CompletionStatus) {
        self.on_ack(seq.wrapping_sub(1));
        for e in &mut self.entries {
            if matches!(e.track, Track::Done(_)) {
                continue;
            }
            e.track = Track::Done(if e.seq == seq {
                status
            } else {
                CompletionStatus::Flushed
            });
        }
    }

    /// A local or peer disconnect: every pending descriptor is flushed.
    pub fn on_flush(&mut self) {
        for e in &mut self.entries {
            if !matches!(e.track, Track::Done(_)) {
                e.track = Track::Done(CompletionStatus::Flushed);
            }
        }
    }

    /// The connection failed: the oldest pending descriptor gets `TransportError`, the rest
    /// `Flushed`.
    pub fn on_break(&mut self) {
        let mut first = true;
        for e in &mut self.entries {
            if matches!(e.track, Track::Done(_)) {
                continue;
            }
            e.track = Track::Done(if first {
                CompletionStatus::TransportError
            } else {
                CompletionStatus::Flushed
            });
            first = false;
        }
    }

    /// Releases the front descriptor if it is done.
    pub fn pop_done(&mut self) -> Option<Completion> {
        let Track::Done(status) = self.entries.front()?.track else {
            return None;
        };
        let e = self.entries.pop_front()?;
        self.settled = self.settled.saturating_sub(1);
        let len = if status.is_ok() {
            e.desc.total_len() as u32
        } else {
            0
        };
        Some(Completion::new(e.desc, status, len, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::RemoteAddr;
    use crate::memory::MemHandle;
    use CompletionStatus::*;
    use Reliability::*;

    fn send(id: u64) -> Descriptor {
        Descriptor::send(vec![]).with_id(id)
    }
    fn read(id: u64) -> Descriptor {
        Descriptor::rdma_read(
            RemoteAddr {
                handle: MemHandle(1),
                offset: 0,
            },
            vec![],
        )
        .with_id(id)
    }
    fn drain(t: &mut SendTracker) -> Vec<(u64, CompletionStatus)> {
        std::iter::from_fn(|| t.pop_done())
            .map(|c| (c.desc.id, c.status))
            .collect()
    }

    #[test]
    fn unreliable_sends_complete_on_transmission() {
        let mut t = SendTracker::default();
        t.transmitted(1, send(1), Unreliable);
        t.transmitted(2, send(2), Unreliable);
        assert_eq!(drain(&mut t), vec![(1, Success), (2, Success)]);
    }

    #[test]
    fn reliable_sends_wait_for_a_cumulative_ack() {
        let mut t = SendTracker::default();
        for s in 1..=3 {
            t.transmitted(s, send(s.into()), ReliableDelivery);
        }
        assert_eq!(drain(&mut t), vec![]);
        t.on_ack(2);
        assert_eq!(drain(&mut t), vec![(1, Success), (2, Success)]);
        t.on_ack(3);
        assert_eq!(drain(&mut t), vec![(3, Success)]);
    }

    #[test]
    fn completions_are_released_in_post_order() {
        let mut t = SendTracker::default();
        t.transmitted(1, read(1), ReliableReception);
        t.transmitted(2, send(2), ReliableReception);
        t.on_ack(2);
        assert_eq!(drain(&mut t), vec![], "the read in front is not done");
        t.on_read_done(1, Success);
        assert_eq!(drain(&mut t), vec![(1, Success), (2, Success)]);
    }

    #[test]
    fn nak_fails_its_descriptor_and_flushes_the_rest() {
        let mut t = SendTracker::default();
        t.transmitted(1, send(1), ReliableReception);
        t.transmitted(2, send(2), ReliableReception);
        t.transmitted(3, send(3), ReliableReception);
        t.on_ack(1);
        t.on_nak(2, RemoteDescriptorError);
        assert_eq!(
            drain(&mut t),
            vec![(1, Success), (2, RemoteDescriptorError), (3, Flushed)]
        );
    }

    #[test]
    fn a_nak_acknowledges_the_frames_before_it() {
        let mut t = SendTracker::default();
        for s in 1..=5u32 {
            t.transmitted(s, send(u64::from(s)), ReliableDelivery);
        }
        // no ack yet for 1..=3: the NAK of 4 implies it
        t.on_nak(4, RemoteDescriptorError);
        assert_eq!(
            drain(&mut t),
            vec![
                (1, Success),
                (2, Success),
                (3, Success),
                (4, RemoteDescriptorError),
                (5, Flushed)
            ]
        );
    }

    #[test]
    fn break_gives_transport_error_then_flushed() {
        let mut t = SendTracker::default();
        t.transmitted(1, send(1), Unreliable);
        t.transmitted(2, send(2), ReliableDelivery);
        t.transmitted(3, read(3), ReliableDelivery);
        t.failed_locally(4, send(4), ProtectionError);
        t.on_break();
        assert_eq!(
            drain(&mut t),
            vec![
                (1, Success),
                (2, TransportError),
                (3, Flushed),
                (4, ProtectionError)
            ]
        );
        assert!(t.is_empty());
    }

    #[test]
    fn flush_completes_everything_pending_as_flushed() {
        let mut t = SendTracker::default();
        t.transmitted(1, send(1), ReliableDelivery);
        t.transmitted(2, send(2), Unreliable);
        t.on_flush();
        assert_eq!(drain(&mut t), vec![(1, Flushed), (2, Success)]);
    }

    #[test]
    fn ack_comparison_survives_sequence_wrap() {
        assert!(seq_le(u32::MAX, 0));
        assert!(seq_le(5, 5));
        assert!(!seq_le(6, 5));
        let mut t = SendTracker::default();
        t.transmitted(u32::MAX, send(1), ReliableDelivery);
        t.transmitted(0, send(2), ReliableDelivery);
        t.on_ack(0);
        assert_eq!(drain(&mut t), vec![(1, Success), (2, Success)]);
    }

    /// The incremental ack scan against the plain rule of the table ("every `AwaitAck`
    /// entry with seq ≤ n is done"), over random interleavings of posts (sends and reads),
    /// cumulative acks, read responses and reaping.
    mod incremental_ack {
        use super::*;
        use proptest::prelude::*;

        #[derive(Debug, Clone)]
        enum Ev {
            Send,
            Read,
            Ack(u32),
            ReadDone(u32),
            Pop,
        }

        fn ev() -> impl Strategy<Value = Ev> {
            prop_oneof![
                3 => Just(Ev::Send),
                1 => Just(Ev::Read),
                2 => (0u32..40).prop_map(Ev::Ack),
                1 => (0u32..40).prop_map(Ev::ReadDone),
                2 => Just(Ev::Pop),
            ]
        }

        proptest! {
            #[test]
            fn matches_a_full_scan(evs in proptest::collection::vec(ev(), 0..80)) {
                let mut t = SendTracker::default();
                // reference: (seq, id, is_read, done status)
                let mut model: Vec<(u32, u64, bool, Option<CompletionStatus>)> = Vec::new();
                let mut seq = 0u32;
                let mut acked = 0u32;
                for e in evs {
                    match e {
                        Ev::Send | Ev::Read => {
                            seq += 1;
                            let is_read = matches!(e, Ev::Read);
                            let d = if is_read { read(seq.into()) } else { send(seq.into()) };
                            t.transmitted(seq, d, ReliableDelivery);
                            model.push((seq, seq.into(), is_read, None));
                        }
                        Ev::Ack(n) => {
                            // acks are cumulative and never go back
                            let n = n.min(seq).max(acked);
                            acked = n;
                            t.on_ack(n);
                            for m in &mut model {
                                if !m.2 && m.3.is_none() && m.0 <= n {
                                    m.3 = Some(Success);
                                }
                            }
                        }
                        Ev::ReadDone(s) => {
                            t.on_read_done(s, Success);
                            if let Some(m) = model.iter_mut().find(|m| m.0 == s && m.2 && m.3.is_none()) {
                                m.3 = Some(Success);
                            }
                        }
                        Ev::Pop => {
                            let want = match model.first() {
                                Some(&(_, id, _, Some(st))) => {
                                    model.remove(0);
                                    Some((id, st))
                                }
                                _ => None,
                            };
                            prop_assert_eq!(t.pop_done().map(|c| (c.desc.id, c.status)), want);
                        }
                    }
                }
                let want: Vec<_> = model.iter().take_while(|m| m.3.is_some()).map(|m| (m.1, m.3.unwrap())).collect();
                prop_assert_eq!(drain(&mut t), want);
            }
        }
    }
}
