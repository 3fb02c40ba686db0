//! Provider selection by URL, and each provider's connection-manager transport (the part of
//! VIA's kernel agent that sets up a connection).
//!
//! | URL | provider | listens on | a connection is |
//! |---|---|---|---|
//! | `tcp://HOST:PORT` | tcp | a TCP listener (`PORT` 0 = any) | one TCP stream |
//! | `tcp://` | tcp | nothing (client-only NIC) | |
//! | `shm:///some/name` or `shm://name` | shm | a Unix socket named after `/some/name` in the user's private directory ([`crate::private_dir`]) | a memfd with two rings, passed over the socket |
//! | `shm://` | shm | nothing (client-only NIC) | |
//!
//! Who may connect: on shm, processes of the same user (`SO_PEERCRED`, checked by both
//! sides; `ICN_VIA_ALLOW_UIDS` adds users); on tcp, processes that prove the job key
//! ([`crate::auth`]) before anything else is read. A tcp NIC listening beyond loopback needs
//! a key the user set (`ICN_VIA_JOB_KEY` or `ICN_VIA_JOB_KEY_FILE`). The socket file is
//! removed when the NIC closes; memfds vanish with their last mapping, so no shared-memory
//! object outlives the processes.

use std::io;
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::AsFd;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, poll};

use crate::auth::{JobKey, KeySource};
use crate::error::{Result, ViaError};
use crate::link::{Link, shm, tcp::TcpLink, timespec};

/// A parsed provider URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    Tcp(Option<String>),
    Shm(Option<String>),
}

impl Address {
    pub fn parse(url: &str) -> Result<Address> {
        let bad = || {
            ViaError::InvalidParameter(format!(
                "provider URL must be tcp://HOST:PORT or shm://NAME, got {url:?}"
            ))
        };
        let (scheme, rest) = url.split_once("://").ok_or_else(bad)?;
        let rest = (!rest.is_empty()).then(|| rest.to_string());
        match scheme {
            "tcp" => Ok(Address::Tcp(rest)),
            "shm" => {
                if rest
                    .as_ref()
                    .is_some_and(|r| r.len() > 90 || r.contains('\0'))
                {
                    return Err(bad());
                }
                Ok(Address::Shm(rest))
            }
            _ => Err(bad()),
        }
    }
    pub fn provider(&self) -> &'static str {
        match self {
            Address::Tcp(_) => "tcp",
            Address::Shm(_) => "shm",
        }
    }
}

/// The listening side of a NIC.
pub enum Listener {
    None,
    Tcp(TcpListener),
    Shm(shm::ShmListener),
}

impl Listener {
    /// Binds according to `addr`; returns the listener and the URL peers should use.
    /// `key` is the tcp job key (`None` for shm): one the user did not set allows loopback
    /// listening only.
    pub fn bind(addr: &Address, key: Option<&JobKey>) -> Result<(Listener, String)> {
        match addr {
            Address::Tcp(None) => Ok((Listener::None, "tcp://".into())),
            Address::Tcp(Some(hp)) => {
                let at = |e| ViaError::at(&format!("tcp://{hp}"), "cannot listen", e);
                let sa = hp.to_socket_addrs().map_err(at)?.next().ok_or_else(|| {
                    ViaError::InvalidParameter(format!("tcp://{hp}: cannot resolve"))
                })?;
                if !sa.ip().is_loopback() && key.is_none_or(|k| k.source() == KeySource::PerUser) {
                    return Err(ViaError::InvalidParameter(format!(
                        "tcp://{hp}: listening beyond loopback needs a job key shared by the \
                         job's hosts: set ICN_VIA_JOB_KEY or ICN_VIA_JOB_KEY_FILE (a 0600 \
                         file); see docs/vipl.md, \"Threat model\""
                    )));
                }
                let l = TcpListener::bind(sa).map_err(at)?;
                l.set_nonblocking(true).map_err(at)?;
                let url = format!("tcp://{}", l.local_addr().map_err(at)?);
                Ok((Listener::Tcp(l), url))
            }
            Address::Shm(None) => Ok((Listener::None, "shm://".into())),
            Address::Shm(Some(name)) => {
                let url = format!("shm://{name}");
                let l = shm::ShmListener::bind(name)
                    .map_err(|e| ViaError::at(&url, "cannot listen", e))?;
                Ok((Listener::Shm(l), url))
            }
        }
    }

    /// Takes one incoming connection, waiting at most `timeout`; `Ok(None)` on timeout or
    /// if the connection was refused at once (shm: another user's). Reads nothing from it:
    /// [`establish`] does, with a deadline, so a silent client cannot hold the caller.
    pub fn accept(&mut self, timeout: Duration) -> Result<Option<Incoming>> {
        let ready = |fd: std::os::fd::BorrowedFd<'_>| -> io::Result<bool> {
            let mut fds = [PollFd::from_borrowed_fd(fd, PollFlags::IN)];
            match poll(&mut fds, Some(&timespec(timeout))) {
                Ok(n) => Ok(n > 0),
                Err(rustix::io::Errno::INTR) => Ok(false),
                Err(e) => Err(e.into()),
            }
        };
        match self {
            Listener::None => Err(ViaError::InvalidState(
                "this NIC was opened without a listening address".into(),
            )),
            Listener::Tcp(l) => {
                if !ready(l.as_fd())? {
                    return Ok(None);
                }
                match l.accept() {
                    Ok((s, _)) => Ok(Some(Incoming::Tcp(s))),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
                    Err(e) => Err(e.into()),
                }
            }
            Listener::Shm(l) => {
                if !ready(l.as_fd())? {
                    return Ok(None);
                }
                Ok(l.accept()?.map(Incoming::Shm))
            }
        }
    }

    /// The descriptor a wait for incoming connections polls (`None`: not listening).
    pub fn fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        match self {
            Listener::None => None,
            Listener::Tcp(l) => Some(l.as_fd()),
            Listener::Shm(l) => Some(l.as_fd()),
        }
    }
}

/// A connection accepted and not yet set up.
pub enum Incoming {
    Tcp(TcpStream),
    Shm(std::os::unix::net::UnixStream),
}

/// Shuts a connection down from another thread: its pending reads end at once.
pub type ShutdownFn = Box<dyn FnOnce() + Send>;

impl Incoming {
    /// A way to shut this connection down while another thread sets it up (`None` if the
    /// socket cannot be duplicated: out of descriptors).
    pub fn shutdown_fn(&self) -> Option<ShutdownFn> {
        Some(match self {
            Incoming::Tcp(s) => {
                let s = s.try_clone().ok()?;
                Box::new(move || {
                    let _ = s.shutdown(std::net::Shutdown::Both);
                })
            }
            Incoming::Shm(s) => {
                let s = s.try_clone().ok()?;
                Box::new(move || {
                    let _ = s.shutdown(std::net::Shutdown::Both);
                })
            }
        })
    }
}

/// Sets up the server side of an accepted connection by `deadline`: on tcp the client must
/// prove the job key first (`key`), on shm it passes the shared area.
pub fn establish(
    incoming: Incoming,
    key: Option<&JobKey>,
    deadline: std::time::Instant,
) -> Result<Box<dyn Link>> {
    match incoming {
        Incoming::Tcp(mut s) => {
            s.set_nonblocking(false)?;
            let key = key.ok_or_else(|| ViaError::InvalidState("tcp NIC without a key".into()))?;
            crate::auth::check_client(&mut s, key, deadline)?;
            Ok(Box::new(TcpLink::new(s)?))
        }
        Incoming::Shm(s) => Ok(Box::new(shm::establish(s, deadline)?)),
    }
}

/// Opens a link to the NIC at `remote`, waiting for it to listen: a refused connection (no
/// NIC at that address yet) is retried, with pauses growing from 1 to 20 ms, until
/// `deadline` (`None`: for ever), then `Timeout` (VIA's `VipConnectRequest` semantics: a
/// client may start before its server). Other errors end the attempt at once.
pub fn dial_until(
    local: &Address,
    remote: &str,
    key: Option<&JobKey>,
    deadline: Option<std::time::Instant>,
) -> Result<Box<dyn Link>> {
    let mut pause = Duration::from_millis(1);
    loop {
        let left = deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
        let attempt = left
            .unwrap_or(Duration::from_secs(30))
            .max(Duration::from_millis(1));
        match dial(local, remote, key, attempt) {
            Err(e) if refused(&e) => {
                if left.is_some_and(|l| l.is_zero()) {
                    return Err(ViaError::Timeout);
                }
                std::thread::sleep(left.map_or(pause, |l| l.min(pause)));
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            r => return r,
        }
    }
}

/// True for "nobody listens there (yet)".
fn refused(e: &ViaError) -> bool {
    match e {
        ViaError::Io(e) => matches!(
            e.kind(),
            io::ErrorKind::ConnectionRefused | io::ErrorKind::NotFound
        ),
        ViaError::ConnectionLost(m) => m.contains("refused"),
        _ => false,
    }
}

/// Opens a link to the NIC at `remote` (a URL of the same provider as `local`), once; on
/// tcp, both ends prove the job key `key` within `timeout`.
pub fn dial(
    local: &Address,
    remote: &str,
    key: Option<&JobKey>,
    timeout: Duration,
) -> Result<Box<dyn Link>> {
    let remote_addr = Address::parse(remote)?;
    match (local, remote_addr) {
        (Address::Tcp(_), Address::Tcp(Some(hp))) => {
            let sa = hp
                .to_socket_addrs()?
                .next()
                .ok_or_else(|| ViaError::InvalidParameter(format!("cannot resolve {hp}")))?;
            let deadline = std::time::Instant::now() + timeout;
            let mut s = TcpStream::connect_timeout(&sa, timeout).map_err(|e| match e.kind() {
                io::ErrorKind::TimedOut => ViaError::Timeout,
                _ => ViaError::ConnectionLost(format!("cannot reach {remote}: {e}")),
            })?;
            let key = key.ok_or_else(|| ViaError::InvalidState("tcp NIC without a key".into()))?;
            crate::auth::prove_client(&mut s, key, deadline).map_err(|e| match e.kind() {
                io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => ViaError::Timeout,
                // Closed before it answered our hello: a server busy with more handshakes
                // than it holds at once evicted us (or it went away). Like a refused
                // connection, worth another try until the deadline.
                io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset => {
                    ViaError::Io(io::Error::new(
                        io::ErrorKind::ConnectionRefused,
                        format!("{remote}: closed before the job key exchange ended ({e})"),
                    ))
                }
                _ => ViaError::ConnectionLost(format!("{remote}: {e}")),
            })?;
            Ok(Box::new(TcpLink::new(s)?))
        }
        (Address::Shm(_), Address::Shm(Some(name))) => Ok(Box::new(
            shm::dial(&name).map_err(|e| ViaError::at(remote, "cannot connect", e))?,
        )),
        _ => Err(ViaError::InvalidParameter(format!(
            "remote address {remote:?} must be a listening address of the {} provider",
            local.provider()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_or_are_rejected() {
        assert_eq!(
            Address::parse("tcp://127.0.0.1:0").unwrap(),
            Address::Tcp(Some("127.0.0.1:0".into()))
        );
        assert_eq!(Address::parse("tcp://").unwrap(), Address::Tcp(None));
        assert_eq!(
            Address::parse("shm:///tmp/icnlab").unwrap(),
            Address::Shm(Some("/tmp/icnlab".into()))
        );
        assert_eq!(Address::parse("shm://").unwrap(), Address::Shm(None));
        for bad in [
            "",
            "tcp",
            "udp://x",
            "shm://a\0b",
            &format!("shm://{}", "x".repeat(91)),
        ] {
            assert!(
                matches!(Address::parse(bad), Err(ViaError::InvalidParameter(_))),
                "{bad:?}"
            );
        }
    }
}
