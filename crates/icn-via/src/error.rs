//! Errors returned by calls ([`ViaError`]) and the per-descriptor completion status
//! ([`CompletionStatus`]).
//!
//! VIA separates the two: a call fails synchronously with a `VIP_*` return code when its
//! arguments are wrong, whereas a descriptor that was accepted by `VipPostSend`/`VipPostRecv`
//! always completes, and its *status word* says how. We keep that split so a consumer can tell
//! "you called me wrongly" from "the operation you asked for failed on the wire".

use std::io;

/// The error of a failed call. Variants follow the VIA 1.0 return codes.
///
/// | variant | VIA return code |
/// |---|---|
/// | `InvalidParameter` | `VIP_INVALID_PARAMETER` |
/// | `Protection` | `VIP_PROTECTION_ERROR` |
/// | `Descriptor` | `VIP_DESCRIPTOR_ERROR` |
/// | `ConnectionLost` | `VIP_ERROR_RESOURCE` on a broken VI / `VIP_NOT_REACHABLE` |
/// | `Timeout` | `VIP_TIMEOUT` |
/// | `ResourceExhausted` | `VIP_ERROR_RESOURCE` |
/// | `Rejected` | `VIP_REJECT` |
/// | `InvalidState` | `VIP_INVALID_STATE` |
/// | `Io` | (provider failure, no VIA equivalent) |
#[derive(Debug, thiserror::Error)]
pub enum ViaError {
    /// A parameter is out of range or malformed; the message names it.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// A memory handle, protection tag or region bound check failed.
    #[error("protection error: {0}")]
    Protection(String),
    /// A descriptor is malformed (too many segments, wrong op for this VI, ...).
    #[error("descriptor error: {0}")]
    Descriptor(String),
    /// The VI's connection is broken (peer died, reliability violation, disconnect).
    #[error("connection lost: {0}")]
    ConnectionLost(String),
    /// A blocking call's timeout expired.
    #[error("timed out")]
    Timeout,
    /// A queue or table is full.
    #[error("resource exhausted: {0}")]
    ResourceExhausted(String),
    /// The server rejected the connection request.
    #[error("connection rejected by peer")]
    Rejected,
    /// The VI is not in a state that allows the call (e.g. post on an idle VI).
    #[error("invalid state: {0}")]
    InvalidState(String),
    /// The provider's transport failed in a way the VIA model has no name for. The OS error
    /// is part of the message, not a separate `source()`: reporters that print the chain
    /// would otherwise print it twice.
    #[error("provider I/O error: {0}")]
    Io(io::Error),
}

impl From<io::Error> for ViaError {
    fn from(e: io::Error) -> Self {
        ViaError::Io(e)
    }
}

impl ViaError {
    /// An OS error on `endpoint` (a URL or shm name) while doing `what`: the message names
    /// both, so a user knows which address is taken or unreachable.
    pub fn at(endpoint: &str, what: &str, e: io::Error) -> Self {
        ViaError::Io(io::Error::new(e.kind(), format!("{endpoint}: {what}: {e}")))
    }
}

/// Shorthand for results of VIA calls.
pub type Result<T> = std::result::Result<T, ViaError>;

/// How one descriptor completed: VIA's descriptor status word, one variant per error bit.
///
/// | variant | VIA status bit | when |
/// |---|---|---|
/// | `Success` | done, no error bit | the operation completed |
/// | `FormatError` | `VIP_STATUS_FORMAT_ERROR` | malformed descriptor detected by the provider |
/// | `ProtectionError` | `VIP_STATUS_PROTECTION_ERROR` | local segment fails handle/ptag/bounds check |
/// | `LengthError` | `VIP_STATUS_LENGTH_ERROR` | incoming data longer than the posted receive |
/// | `PartialPacket` | `VIP_STATUS_PARTIAL_PACKET_ERROR` | a frame was cut by a broken connection |
/// | `Flushed` | `VIP_STATUS_DESC_FLUSHED_ERROR` | the VI broke or disconnected before it ran |
/// | `TransportError` | `VIP_STATUS_TRANSPORT_ERROR` | the connection failed under this descriptor |
/// | `RdmaProtectionError` | `VIP_STATUS_RDMA_PROT_ERROR` | remote region refused the RDMA |
/// | `RemoteDescriptorError` | `VIP_STATUS_REMOTE_DESC_ERROR` | no receive posted at the peer |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum CompletionStatus {
    Success,
    FormatError,
    ProtectionError,
    LengthError,
    PartialPacket,
    Flushed,
    TransportError,
    RdmaProtectionError,
    RemoteDescriptorError,
}

impl CompletionStatus {
    /// True for [`CompletionStatus::Success`].
    pub fn is_ok(self) -> bool {
        self == CompletionStatus::Success
    }

    /// The wire code used in NAK/BREAK frames (stable, 0 = success).
    pub fn code(self) -> u32 {
        match self {
            CompletionStatus::Success => 0,
            CompletionStatus::FormatError => 1,
            CompletionStatus::ProtectionError => 2,
            CompletionStatus::LengthError => 3,
            CompletionStatus::PartialPacket => 4,
            CompletionStatus::Flushed => 5,
            CompletionStatus::TransportError => 6,
            CompletionStatus::RdmaProtectionError => 7,
            CompletionStatus::RemoteDescriptorError => 8,
        }
    }

    /// Inverse of [`CompletionStatus::code`]; `None` for an unknown code from the wire.
    pub fn from_code(code: u32) -> Option<Self> {
        Some(match code {
            0 => CompletionStatus::Success,
            1 => CompletionStatus::FormatError,
            2 => CompletionStatus::ProtectionError,
            3 => CompletionStatus::LengthError,
            4 => CompletionStatus::PartialPacket,
            5 => CompletionStatus::Flushed,
            6 => CompletionStatus::TransportError,
            7 => CompletionStatus::RdmaProtectionError,
            8 => CompletionStatus::RemoteDescriptorError,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_codes_round_trip_and_unknown_codes_are_rejected() {
        for code in 0..9 {
            let s = CompletionStatus::from_code(code).unwrap();
            assert_eq!(s.code(), code);
            assert_eq!(s.is_ok(), code == 0);
        }
        assert_eq!(CompletionStatus::from_code(9), None);
        assert_eq!(CompletionStatus::from_code(u32::MAX), None);
    }
}
