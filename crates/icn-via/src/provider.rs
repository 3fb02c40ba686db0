//! Provider selection by URL, and each provider's connection-manager transport (the part of
//! VIA's kernel agent that sets up a connection).
//!
//! | URL | provider | listens on | a connection is |
//! |---|---|---|---|
//! | `tcp://HOST:PORT` | tcp | a TCP listener (`PORT` 0 = any) | one TCP stream |
//! | `tcp://` | tcp | nothing (client-only NIC) | |
//! | `shm:///some/name` or `shm://name` | shm | the abstract Unix socket `icnlab-via:/some/name` | a memfd with two rings, passed over the socket |
//! | `shm://` | shm | nothing (client-only NIC) | |
//!
//! Abstract Unix sockets leave nothing in the file system, and memfds vanish with their last
//! mapping, so no shared-memory object outlives the processes.

use std::io;
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::AsFd;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, poll};

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
    pub fn bind(addr: &Address) -> Result<(Listener, String)> {
        match addr {
            Address::Tcp(None) => Ok((Listener::None, "tcp://".into())),
            Address::Tcp(Some(hp)) => {
                let at = |e| ViaError::at(&format!("tcp://{hp}"), "cannot listen", e);
                let l = TcpListener::bind(hp.as_str()).map_err(at)?;
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

    /// Accepts one link, waiting at most `timeout`; `Ok(None)` on timeout.
    pub fn accept(&mut self, timeout: Duration) -> Result<Option<Box<dyn Link>>> {
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
                    Ok((s, _)) => {
                        s.set_nonblocking(false)?;
                        Ok(Some(Box::new(TcpLink::new(s)?)))
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
                    Err(e) => Err(e.into()),
                }
            }
            Listener::Shm(l) => {
                if !ready(l.as_fd())? {
                    return Ok(None);
                }
                Ok(l.accept()?.map(|link| Box::new(link) as Box<dyn Link>))
            }
        }
    }
}

/// Opens a link to the NIC at `remote`, waiting for it to listen: a refused connection (no
/// NIC at that address yet) is retried, with pauses growing from 1 to 20 ms, until
/// `deadline` (`None`: for ever), then `Timeout` (VIA's `VipConnectRequest` semantics: a
/// client may start before its server). Other errors end the attempt at once.
pub fn dial_until(
    local: &Address,
    remote: &str,
    deadline: Option<std::time::Instant>,
) -> Result<Box<dyn Link>> {
    let mut pause = Duration::from_millis(1);
    loop {
        let left = deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
        let attempt = left
            .unwrap_or(Duration::from_secs(30))
            .max(Duration::from_millis(1));
        match dial(local, remote, attempt) {
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

/// Opens a link to the NIC at `remote` (a URL of the same provider as `local`), once.
pub fn dial(local: &Address, remote: &str, timeout: Duration) -> Result<Box<dyn Link>> {
    let remote_addr = Address::parse(remote)?;
    match (local, remote_addr) {
        (Address::Tcp(_), Address::Tcp(Some(hp))) => {
            let sa = hp
                .to_socket_addrs()?
                .next()
                .ok_or_else(|| ViaError::InvalidParameter(format!("cannot resolve {hp}")))?;
            let s = TcpStream::connect_timeout(&sa, timeout).map_err(|e| match e.kind() {
                io::ErrorKind::TimedOut => ViaError::Timeout,
                _ => ViaError::ConnectionLost(format!("cannot reach {remote}: {e}")),
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
