//! An optional log of protocol events, for checkers in tests (conservation, the intelligent
//! hold-back property). Off by default: a disabled log costs one branch per event.

use crate::protocol::{Echo, Phase, StateChange};

/// Something that happened at `cycle` on the ring. `seq` identifies a send run-wide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A send was created and queued at its source.
    Created {
        cycle: u64,
        seq: u64,
        src: u8,
        dst: u8,
    },
    /// A send was created but its source's send queue was full (never transmitted).
    Dropped { cycle: u64, src: u8, dst: u8 },
    /// A send's header left its source.
    Transmit {
        cycle: u64,
        seq: u64,
        src: u8,
        dst: u8,
        phase: Phase,
    },
    /// The target's stripper answered a send.
    Stripped {
        cycle: u64,
        seq: u64,
        node: u8,
        phase: Phase,
        echo: Echo,
        ps_disallow: bool,
    },
    /// The source consumed the echo of a send.
    EchoReceived {
        cycle: u64,
        seq: u64,
        node: u8,
        echo: Echo,
    },
    /// A receiver's serve state changed.
    StateChanged {
        cycle: u64,
        node: u8,
        change: StateChange,
    },
    /// A NOTIFY left its origin.
    NotifySent {
        cycle: u64,
        node: u8,
        change: StateChange,
    },
    /// Node `node` parsed a passing NOTIFY from `about` (and updated its SST).
    NotifySeen {
        cycle: u64,
        node: u8,
        about: u8,
        change: StateChange,
    },
    /// A NOTIFY came back to its origin and was removed.
    NotifyRemoved { cycle: u64, node: u8 },
    /// Switched systems: node `node` parsed a relayed NOTIFY saying global host `host` made
    /// `change` (and updated its remote table).
    RemoteNotifySeen {
        cycle: u64,
        node: u8,
        host: u16,
        change: StateChange,
    },
}
