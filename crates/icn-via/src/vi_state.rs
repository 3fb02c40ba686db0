//! The VI connection state machine (VIA 1.0 §2.4), sans-IO.
//!
//! | state | event | next | note |
//! |---|---|---|---|
//! | `Idle` | `RequestSent` | `PendingConnect` | client side |
//! | `Idle` | `Accepted` | `Connected` | server side, `VipConnectAccept` |
//! | `PendingConnect` | `Accepted` | `Connected` | |
//! | `PendingConnect` | `Rejected` / `Fault` | `Idle` | the VI may try again |
//! | `Connected` | `Disconnect` / `PeerDisconnected` | `Idle` | pending descriptors flushed |
//! | `Connected` | `Fault` | `Error` | peer died, reliability violated |
//! | `Error` | `Disconnect` | `Idle` | |
//! | anything else | | unchanged, `InvalidState` | |
//!
//! Posting: receives may be posted in `Idle`, `PendingConnect` and `Connected` (VIA lets a
//! consumer pre-post before connecting); sends and RDMA only in `Connected`.

use crate::error::{Result, ViaError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum ViState {
    Idle,
    PendingConnect,
    Connected,
    Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViEvent {
    RequestSent,
    Accepted,
    Rejected,
    Disconnect,
    PeerDisconnected,
    Fault,
}

impl ViState {
    /// The transition for `ev`, or `InvalidState` if `ev` is not allowed here.
    pub fn on(self, ev: ViEvent) -> Result<ViState> {
        use ViEvent::*;
        use ViState::*;
        Ok(match (self, ev) {
            (Idle, RequestSent) => PendingConnect,
            (Idle | PendingConnect, Accepted) => Connected,
            (PendingConnect, Rejected | Fault) => Idle,
            (Connected, Disconnect | PeerDisconnected) => Idle,
            (Connected, Fault) => Error,
            (Error, Disconnect) => Idle,
            (s, e) => {
                return Err(ViaError::InvalidState(format!(
                    "{e:?} not allowed in VI state {s:?}"
                )));
            }
        })
    }
    /// May a send-queue descriptor be posted?
    pub fn can_post_send(self) -> bool {
        self == ViState::Connected
    }
    /// May a receive descriptor be posted?
    pub fn can_post_recv(self) -> bool {
        self != ViState::Error
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ViEvent::*;
    use ViState::*;

    #[test]
    fn every_row_of_the_table() {
        let rows = [
            (Idle, RequestSent, PendingConnect),
            (Idle, Accepted, Connected),
            (PendingConnect, Accepted, Connected),
            (PendingConnect, Rejected, Idle),
            (PendingConnect, Fault, Idle),
            (Connected, Disconnect, Idle),
            (Connected, PeerDisconnected, Idle),
            (Connected, Fault, Error),
            (Error, Disconnect, Idle),
        ];
        for (s, e, n) in rows {
            assert_eq!(s.on(e).unwrap(), n, "{s:?} --{e:?}-->");
        }
        let all_s = [Idle, PendingConnect, Connected, Error];
        let all_e = [
            RequestSent,
            Accepted,
            Rejected,
            Disconnect,
            PeerDisconnected,
            Fault,
        ];
        let mut invalid = 0;
        for s in all_s {
            for e in all_e {
                if !rows.iter().any(|r| r.0 == s && r.1 == e) {
                    assert!(
                        matches!(s.on(e), Err(ViaError::InvalidState(_))),
                        "{s:?} {e:?}"
                    );
                    invalid += 1;
                }
            }
        }
        assert_eq!(invalid, 24 - rows.len());
    }

    #[test]
    fn posting_rules() {
        assert!(Connected.can_post_send());
        for s in [Idle, PendingConnect, Error] {
            assert!(!s.can_post_send());
        }
        assert!(
            Idle.can_post_recv() && PendingConnect.can_post_recv() && Connected.can_post_recv()
        );
        assert!(!Error.can_post_recv());
    }
}
