//! What a receiving VI does with an incoming data frame, sans-IO (VIA 1.0 §2.5, §6).
//!
//! Inputs: the VI's reliability level, whether the frame needs a receive descriptor (a send,
//! or an RDMA write with immediate data), the capacity of the first posted receive (if any),
//! the payload length, and the registration-table verdict for an RDMA target.
//!
//! | frame | condition | unreliable VI | reliable VI (both levels) |
//! |---|---|---|---|
//! | any | all checks pass | place; consume receive if needed | same, then ack |
//! | RDMA write | target region fails the check (handle, ptag, bounds, rights) or VI has RDMA write disabled | drop silently | NAK `RdmaProtectionError`, VI breaks |
//! | send / write+imm | no receive posted | drop silently | NAK `RemoteDescriptorError`, VI breaks |
//! | send | payload longer than the receive | receive completes `LengthError` | receive completes `LengthError`, NAK `RemoteDescriptorError`, VI breaks |
//! | RDMA read request | target fails the check or VI has RDMA read disabled | (not allowed on unreliable VIs) | respond `RdmaProtectionError`, VI breaks |
//!
//! "Drop silently" is VIA's unreliable service: errors do not break the connection and the
//! sender is not told. The sender of a refused frame on a reliable VI gets the NAK status on
//! that descriptor and `Flushed` on every later one.

use crate::attrs::Reliability;
use crate::error::CompletionStatus;

/// What to do with one incoming data frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxAction {
    /// Copy the payload to its destination; pop the front receive if `consume_recv`.
    Place { consume_recv: bool },
    /// Discard the payload. Complete the front receive with `recv_status` if set; send a NAK
    /// with `nak` and break the VI if set.
    Discard {
        recv_status: Option<CompletionStatus>,
        nak: Option<CompletionStatus>,
    },
}

/// The rule of the module table.
pub fn decide(
    reliability: Reliability,
    needs_recv: bool,
    recv_capacity: Option<u64>,
    is_plain_send: bool,
    len: u64,
    target: Result<(), CompletionStatus>,
) -> RxAction {
    let reliable = reliability.is_reliable();
    let refuse = |recv_status: Option<CompletionStatus>, nak: CompletionStatus| RxAction::Discard {
        recv_status,
        nak: reliable.then_some(nak),
    };
    if target.is_err() {
        return refuse(None, CompletionStatus::RdmaProtectionError);
    }
    if needs_recv {
        match recv_capacity {
            None => return refuse(None, CompletionStatus::RemoteDescriptorError),
            Some(cap) if is_plain_send && len > cap => {
                return refuse(
                    Some(CompletionStatus::LengthError),
                    CompletionStatus::RemoteDescriptorError,
                );
            }
            Some(_) => {}
        }
    }
    RxAction::Place {
        consume_recv: needs_recv,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use CompletionStatus::*;
    use Reliability::*;

    const OK: Result<(), CompletionStatus> = Ok(());
    const BAD: Result<(), CompletionStatus> = Err(RdmaProtectionError);

    #[test]
    fn table_rows_for_every_reliability_level() {
        for rel in [Unreliable, ReliableDelivery, ReliableReception] {
            let nak = |s| rel.is_reliable().then_some(s);
            // row 1: accepted
            assert_eq!(
                decide(rel, true, Some(10), true, 10, OK),
                RxAction::Place { consume_recv: true }
            );
            assert_eq!(
                decide(rel, false, None, false, 10, OK),
                RxAction::Place {
                    consume_recv: false
                }
            );
            assert_eq!(
                decide(rel, true, Some(0), false, 10, OK),
                RxAction::Place { consume_recv: true },
                "write+imm ignores receive capacity"
            );
            // row 2: RDMA target refused
            assert_eq!(
                decide(rel, false, None, false, 1, BAD),
                RxAction::Discard {
                    recv_status: None,
                    nak: nak(RdmaProtectionError)
                }
            );
            // row 3: no receive posted
            assert_eq!(
                decide(rel, true, None, true, 1, OK),
                RxAction::Discard {
                    recv_status: None,
                    nak: nak(RemoteDescriptorError)
                }
            );
            // row 4: too long
            assert_eq!(
                decide(rel, true, Some(9), true, 10, OK),
                RxAction::Discard {
                    recv_status: Some(LengthError),
                    nak: nak(RemoteDescriptorError)
                }
            );
        }
    }
}
