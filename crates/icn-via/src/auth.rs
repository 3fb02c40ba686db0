//! The tcp provider's job key and its proof at connect time: an HMAC-SHA-256 challenge and
//! response in both directions, before the connection request or any frame is read.
//!
//! | step | bytes | who |
//! |---|---|---|
//! | 1 | `ICNVIAK1` + client nonce `Nc` (32 random bytes) | client → server |
//! | 2 | server nonce `Ns` (32) + `HMAC(K, "icn-via server" ‖ Nc ‖ Ns)` | server → client |
//! | 3 | `HMAC(K, "icn-via client" ‖ Nc ‖ Ns)` | client → server |
//! | 4 | one byte `1`: proof accepted | server → client |
//!
//! Each side checks the other's MAC in constant time (`hmac`'s `verify_slice`); a server that
//! does not receive a valid step 3 closes the connection before reading anything else, so a
//! peer without the key never reaches a descriptor, a region or the connection manager's
//! queue. The two labels differ, so a MAC cannot be reflected back to its sender; fresh nonces
//! on both sides make a recorded exchange useless. Nothing is encrypted: the key proves who
//! may connect, it does not hide the data (see docs/vipl.md, "Threat model"). The cost is one
//! round trip and four HMACs per connection; messages carry nothing extra.
//!
//! The key ([`JobKey::load`]), in order: `ICN_VIA_JOB_KEY` (the variable's bytes, at least 16),
//! `ICN_VIA_JOB_KEY_FILE` (a file of ours, not a link, mode 0600 or stricter, at least 16
//! bytes, surrounding white space dropped), else the per-user key `job.key` in the private
//! directory ([`crate::private_dir`]), created with 32 random bytes (hex) the first time. The
//! per-user key only serves processes of this user on this host: listening on an address other
//! than loopback needs one of the two variables (the same key given to every host of the job).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Instant;

use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

const MAGIC: &[u8; 8] = b"ICNVIAK1";
const NONCE: usize = 32;
const MAC: usize = 32;
/// Shortest key accepted.
pub const MIN_KEY_LEN: usize = 16;

/// Where a key came from (errors and docs name it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource {
    /// `ICN_VIA_JOB_KEY`.
    Env,
    /// `ICN_VIA_JOB_KEY_FILE`.
    File,
    /// The per-user `job.key` of the private directory.
    PerUser,
}

/// A job key.
#[derive(Clone)]
pub struct JobKey {
    key: Vec<u8>,
    source: KeySource,
}

impl std::fmt::Debug for JobKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JobKey({:?})", self.source)
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

impl JobKey {
    /// A key from bytes (at least [`MIN_KEY_LEN`]).
    pub fn new(key: &[u8], source: KeySource) -> io::Result<JobKey> {
        if key.len() < MIN_KEY_LEN {
            return Err(invalid(format!(
                "job key must be at least {MIN_KEY_LEN} bytes, got {}",
                key.len()
            )));
        }
        Ok(JobKey {
            key: key.to_vec(),
            source,
        })
    }

    /// The key of this process (see the module doc for the order).
    pub fn load() -> io::Result<JobKey> {
        if let Some(k) = std::env::var_os("ICN_VIA_JOB_KEY").filter(|k| !k.is_empty()) {
            use std::os::unix::ffi::OsStrExt;
            return JobKey::new(k.as_bytes(), KeySource::Env)
                .map_err(|e| invalid(format!("ICN_VIA_JOB_KEY: {e}")));
        }
        if let Some(p) = std::env::var_os("ICN_VIA_JOB_KEY_FILE").filter(|k| !k.is_empty()) {
            let p = Path::new(&p);
            let bytes = crate::private_dir::read_file(p, 4096)
                .map_err(|e| invalid(format!("ICN_VIA_JOB_KEY_FILE: {e}")))?;
            return JobKey::new(bytes.trim_ascii(), KeySource::File)
                .map_err(|e| invalid(format!("ICN_VIA_JOB_KEY_FILE {}: {e}", p.display())));
        }
        let path = crate::private_dir::dir()?.join("job.key");
        match crate::private_dir::read_file(&path, 4096) {
            Ok(b) => JobKey::new(b.trim_ascii(), KeySource::PerUser)
                .map_err(|e| invalid(format!("{}: {e}", path.display()))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let mut raw = [0u8; 32];
                getrandom::fill(&mut raw).map_err(|e| io::Error::other(e.to_string()))?;
                let hex: String = raw.iter().map(|b| format!("{b:02x}")).collect();
                // Written whole under a temporary name, then linked into place (which fails if
                // another process of ours got there first): a reader never sees a part.
                static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
                let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let tmp = path.with_file_name(format!(".job.key.{}.{n}", std::process::id()));
                let _ = std::fs::remove_file(&tmp);
                crate::private_dir::create_file(&tmp, hex.as_bytes())?;
                let linked = std::fs::hard_link(&tmp, &path);
                let _ = std::fs::remove_file(&tmp);
                match linked {
                    Ok(()) => JobKey::new(hex.as_bytes(), KeySource::PerUser),
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                        let b = crate::private_dir::read_file(&path, 4096)?;
                        JobKey::new(b.trim_ascii(), KeySource::PerUser)
                    }
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }

    pub fn source(&self) -> KeySource {
        self.source
    }

    fn mac(&self, label: &[u8], nc: &[u8], ns: &[u8]) -> HmacSha256 {
        let mut m = HmacSha256::new_from_slice(&self.key).expect("HMAC takes any key length");
        m.update(label);
        m.update(nc);
        m.update(ns);
        m
    }
}

fn nonce() -> io::Result<[u8; NONCE]> {
    let mut n = [0u8; NONCE];
    getrandom::fill(&mut n).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(n)
}

/// Sets the socket's timeouts to what is left until `deadline` (`TimedOut` if nothing is).
fn bound(s: &TcpStream, deadline: Instant) -> io::Result<()> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(io::Error::new(io::ErrorKind::TimedOut, "timed out"));
    }
    s.set_read_timeout(Some(left))?;
    s.set_write_timeout(Some(left))
}

fn read_exact(s: &mut TcpStream, buf: &mut [u8], deadline: Instant) -> io::Result<()> {
    let mut have = 0;
    while have < buf.len() {
        bound(s, deadline)?;
        match s.read(&mut buf[have..]) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "peer closed the connection during the job key exchange",
                ));
            }
            Ok(n) => have += n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn denied(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, msg.to_string())
}

/// Client side: proves the key to the server at the other end of `s`, and checks the server
/// knows it too, by `deadline`.
pub fn prove_client(s: &mut TcpStream, key: &JobKey, deadline: Instant) -> io::Result<()> {
    let nc = nonce()?;
    let mut hello = [0u8; 8 + NONCE];
    hello[..8].copy_from_slice(MAGIC);
    hello[8..].copy_from_slice(&nc);
    bound(s, deadline)?;
    s.write_all(&hello)?;
    let mut reply = [0u8; NONCE + MAC];
    read_exact(s, &mut reply, deadline)?;
    let (ns, server_mac) = reply.split_at(NONCE);
    key.mac(b"icn-via server", &nc, ns)
        .verify_slice(server_mac)
        .map_err(|_| {
            denied(
                "the server did not prove the job key (a different key, or not an icn-via \
                 NIC): set the same ICN_VIA_JOB_KEY or ICN_VIA_JOB_KEY_FILE on both ends",
            )
        })?;
    let mine = key.mac(b"icn-via client", &nc, ns).finalize().into_bytes();
    bound(s, deadline)?;
    s.write_all(&mine)?;
    let mut ok = [0u8; 1];
    read_exact(s, &mut ok, deadline).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => {
            denied("the server rejected our proof of the job key (keys differ)")
        }
        _ => e,
    })?;
    if ok[0] != 1 {
        return Err(denied("the server rejected our proof of the job key"));
    }
    Ok(())
}

/// Server side: checks the client at the other end of `s` knows the key, and proves we do,
/// by `deadline`. On any failure the caller drops the connection unread.
pub fn check_client(s: &mut TcpStream, key: &JobKey, deadline: Instant) -> io::Result<()> {
    let mut hello = [0u8; 8 + NONCE];
    read_exact(s, &mut hello, deadline)?;
    if &hello[..8] != MAGIC {
        return Err(denied("not an icn-via client (no job key exchange)"));
    }
    let nc = &hello[8..];
    let ns = nonce()?;
    let mut reply = [0u8; NONCE + MAC];
    reply[..NONCE].copy_from_slice(&ns);
    reply[NONCE..].copy_from_slice(&key.mac(b"icn-via server", nc, &ns).finalize().into_bytes());
    bound(s, deadline)?;
    s.write_all(&reply)?;
    let mut theirs = [0u8; MAC];
    read_exact(s, &mut theirs, deadline)?;
    key.mac(b"icn-via client", nc, &ns)
        .verify_slice(&theirs)
        .map_err(|_| denied("the client did not prove the job key"))?;
    bound(s, deadline)?;
    s.write_all(&[1])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::time::Duration;

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        (c, l.accept().unwrap().0)
    }

    fn run(client_key: &[u8], server_key: &[u8]) -> (io::Result<()>, io::Result<()>) {
        let (mut c, mut s) = pair();
        let ck = JobKey::new(client_key, KeySource::Env).unwrap();
        let sk = JobKey::new(server_key, KeySource::Env).unwrap();
        let d = Instant::now() + Duration::from_secs(5);
        let t = std::thread::spawn(move || {
            let r = check_client(&mut s, &sk, d);
            drop(s);
            r
        });
        let rc = prove_client(&mut c, &ck, d);
        (rc, t.join().unwrap())
    }

    #[test]
    fn the_same_key_is_accepted_both_ways() {
        let (c, s) = run(b"0123456789abcdef", b"0123456789abcdef");
        c.unwrap();
        s.unwrap();
    }

    #[test]
    fn different_keys_are_refused_on_both_sides() {
        let (c, s) = run(b"0123456789abcdef", b"0123456789abcdeX");
        assert_eq!(c.unwrap_err().kind(), io::ErrorKind::PermissionDenied);
        // The server saw either our hello and then the connection closed, or a bad proof.
        assert!(s.is_err());
    }

    #[test]
    fn a_client_without_the_exchange_is_refused_and_a_silent_one_times_out() {
        let (mut c, mut s) = pair();
        let k = JobKey::new(b"0123456789abcdef", KeySource::Env).unwrap();
        // a raw VIA Connect frame instead of the hello
        c.write_all(&[0u8; 40]).unwrap();
        let e = check_client(&mut s, &k, Instant::now() + Duration::from_secs(5)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        let (_c, mut s) = pair();
        let t0 = Instant::now();
        let e = check_client(&mut s, &k, t0 + Duration::from_millis(100)).unwrap_err();
        assert!(
            matches!(
                e.kind(),
                io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
            ),
            "{e}"
        );
    }

    #[test]
    fn short_keys_are_refused() {
        assert!(
            JobKey::new(b"short", KeySource::Env)
                .unwrap_err()
                .to_string()
                .contains("16")
        );
    }
}
