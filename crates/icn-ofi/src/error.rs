//! libfabric's error codes (`rdma/fi_errno.h`: the `FI_E*` that equal an errno, and the
//! provider-range ones from 256) and the error type the safe layer returns.

use icn_via::{CompletionStatus, ViaError};

pub const FI_SUCCESS: i32 = 0;
pub const FI_EPERM: i32 = libc::EPERM;
pub const FI_EIO: i32 = libc::EIO;
pub const FI_EAGAIN: i32 = libc::EAGAIN;
pub const FI_ENOMEM: i32 = libc::ENOMEM;
pub const FI_EACCES: i32 = libc::EACCES;
pub const FI_EBUSY: i32 = libc::EBUSY;
pub const FI_ENODEV: i32 = libc::ENODEV;
pub const FI_EINVAL: i32 = libc::EINVAL;
pub const FI_ENOSPC: i32 = libc::ENOSPC;
pub const FI_ENOSYS: i32 = libc::ENOSYS;
pub const FI_ENODATA: i32 = libc::ENODATA;
pub const FI_EMSGSIZE: i32 = libc::EMSGSIZE;
pub const FI_ENOPROTOOPT: i32 = libc::ENOPROTOOPT;
pub const FI_EOPNOTSUPP: i32 = libc::EOPNOTSUPP;
pub const FI_EADDRINUSE: i32 = libc::EADDRINUSE;
pub const FI_EADDRNOTAVAIL: i32 = libc::EADDRNOTAVAIL;
pub const FI_ENETDOWN: i32 = libc::ENETDOWN;
pub const FI_ECONNABORTED: i32 = libc::ECONNABORTED;
pub const FI_ECONNRESET: i32 = libc::ECONNRESET;
pub const FI_EISCONN: i32 = libc::EISCONN;
pub const FI_ENOTCONN: i32 = libc::ENOTCONN;
pub const FI_ETIMEDOUT: i32 = libc::ETIMEDOUT;
pub const FI_ECONNREFUSED: i32 = libc::ECONNREFUSED;
pub const FI_EHOSTUNREACH: i32 = libc::EHOSTUNREACH;
pub const FI_EALREADY: i32 = libc::EALREADY;
pub const FI_ECANCELED: i32 = libc::ECANCELED;
pub const FI_EOTHER: i32 = 256;
pub const FI_ETOOSMALL: i32 = 257;
pub const FI_EOPBADSTATE: i32 = 258;
pub const FI_EAVAIL: i32 = 259;
pub const FI_EBADFLAGS: i32 = 260;
pub const FI_ENOEQ: i32 = 261;
pub const FI_ENOCQ: i32 = 263;
pub const FI_ETRUNC: i32 = 265;

/// An error of a provider call: the positive `FI_E*` code (the C entry point returns its
/// negation) and what went wrong, for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: i32,
    pub msg: String,
}

impl Error {
    pub fn new(code: i32, msg: impl Into<String>) -> Self {
        Error {
            code,
            msg: msg.into(),
        }
    }
    /// What a C entry point returns: `-code`.
    pub fn ret(&self) -> i32 {
        -self.code
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (-FI_E code {})", self.msg, self.code)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

impl From<ViaError> for Error {
    fn from(e: ViaError) -> Self {
        let code = match &e {
            ViaError::InvalidParameter(_) | ViaError::Descriptor(_) => FI_EINVAL,
            ViaError::Protection(_) => FI_EACCES,
            ViaError::ConnectionLost(_) => FI_ECONNRESET,
            ViaError::Timeout => FI_ETIMEDOUT,
            ViaError::ResourceExhausted(_) => FI_EAGAIN,
            ViaError::Rejected => FI_ECONNREFUSED,
            ViaError::InvalidState(_) => FI_EOPBADSTATE,
            ViaError::Io(io) => match io.kind() {
                std::io::ErrorKind::AddrInUse => FI_EADDRINUSE,
                std::io::ErrorKind::AddrNotAvailable => FI_EADDRNOTAVAIL,
                std::io::ErrorKind::PermissionDenied => FI_EACCES,
                std::io::ErrorKind::ConnectionRefused => FI_ECONNREFUSED,
                _ => FI_EIO,
            },
        };
        Error::new(code, e.to_string())
    }
}

/// The `FI_E*` a completion with `status` reports in its `fi_cq_err_entry`.
pub fn completion_errno(status: CompletionStatus) -> i32 {
    match status {
        CompletionStatus::Success => FI_SUCCESS,
        CompletionStatus::FormatError => FI_EINVAL,
        CompletionStatus::ProtectionError | CompletionStatus::RdmaProtectionError => FI_EACCES,
        CompletionStatus::LengthError => FI_ETRUNC,
        CompletionStatus::Flushed => FI_ECANCELED,
        CompletionStatus::PartialPacket | CompletionStatus::TransportError => FI_EIO,
        CompletionStatus::RemoteDescriptorError => FI_ENOTCONN,
    }
}

/// Prints `msg` on standard error when `FI_LOG_LEVEL` asks for warnings (libfabric's own
/// switch for provider messages), so a failing call says why.
pub fn warn(msg: &str) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let on = *ON.get_or_init(|| {
        std::env::var("FI_LOG_LEVEL").is_ok_and(|l| {
            matches!(
                l.to_ascii_lowercase().as_str(),
                "warn" | "info" | "debug" | "trace"
            )
        })
    });
    if on {
        eprintln!("libfabric:icnvia:warn: {msg}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failed_completion_maps_to_a_nonzero_code_and_success_to_zero() {
        let all = [
            CompletionStatus::Success,
            CompletionStatus::FormatError,
            CompletionStatus::ProtectionError,
            CompletionStatus::LengthError,
            CompletionStatus::PartialPacket,
            CompletionStatus::Flushed,
            CompletionStatus::TransportError,
            CompletionStatus::RdmaProtectionError,
            CompletionStatus::RemoteDescriptorError,
        ];
        for s in all {
            assert_eq!(completion_errno(s) == 0, s.is_ok(), "{s:?}");
        }
        assert_eq!(completion_errno(CompletionStatus::LengthError), FI_ETRUNC);
        assert_eq!(completion_errno(CompletionStatus::Flushed), FI_ECANCELED);
    }

    #[test]
    fn via_errors_become_their_libfabric_codes() {
        assert_eq!(Error::from(ViaError::Rejected).code, FI_ECONNREFUSED);
        assert_eq!(Error::from(ViaError::Timeout).ret(), -libc::ETIMEDOUT);
        let inuse = ViaError::Io(std::io::Error::from(std::io::ErrorKind::AddrInUse));
        assert_eq!(Error::from(inuse).code, FI_EADDRINUSE);
    }
}
