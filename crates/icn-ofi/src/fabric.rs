//! A fabric: one icn-via NIC of one provider (shm or tcp), opened on first use.
//!
//! Everything of a fabric lives on that one NIC: the VIs of its active endpoints (a
//! client's and those a passive endpoint accepts), the memory its domains register, the
//! protection tag they share. icn-via's registrations belong to a NIC, and a region an
//! endpoint sends from or a peer writes into must be known to the NIC of the VI that moves
//! it, so one NIC per fabric is what lets any endpoint use any registration of the domain.
//! The NIC listens at the fabric's address: a passive endpoint's `fi_listen` starts taking
//! its connection requests (port 0 there means "the fabric's address, whatever it is").

use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::{Arc, Mutex};

use icn_via::{Nic, Ptag, ViaError};

use crate::addr::Link;
use crate::error::{Error, FI_EADDRINUSE, FI_EADDRNOTAVAIL, Result};

/// The fabric's NIC, its protection tag and the address it listens at.
pub struct NicCtx {
    pub nic: Nic,
    pub ptag: Ptag,
    pub addr: SocketAddrV4,
    pub link: Link,
}

/// A fabric (`fi_fabric`): its link and, once used, its NIC.
pub struct Fabric {
    pub link: Link,
    nic: Mutex<Option<Arc<NicCtx>>>,
    /// Whether the NIC is the process's one of this link ([`Fabric::new`]).
    shared: bool,
}

/// The process's NIC of each link while a fabric holds it: `ofi_rxm` opens the core
/// fabric more than once and uses the endpoints of one with the domain of another, so
/// every fabric of a link in a process shares one NIC (and so its registrations).
static PROCESS_NICS: Mutex<[Option<std::sync::Weak<NicCtx>>; 2]> = Mutex::new([None, None]);

/// How many random shm names are tried before giving up (each a socket in the user's
/// private directory; a live one is never replaced).
const SHM_TRIES: usize = 64;

impl Fabric {
    /// A fabric on the process's NIC of `link`.
    pub fn new(link: Link) -> Fabric {
        Fabric {
            link,
            nic: Mutex::new(None),
            shared: true,
        }
    }

    /// A fabric with a NIC of its own (tests: two "processes" in one).
    pub fn private(link: Link) -> Fabric {
        Fabric {
            link,
            nic: Mutex::new(None),
            shared: false,
        }
    }

    /// The fabric's NIC, opened at `want` (port 0 or `None`: any free address on loopback)
    /// if it is not open yet. A NIC already open serves any `want` of port 0 or its own;
    /// another port is `-FI_EADDRINUSE` (one listening address per fabric).
    pub fn nic(&self, want: Option<SocketAddrV4>) -> Result<Arc<NicCtx>> {
        let mut slot = self.nic.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = slot.as_ref() {
            return match want {
                Some(w) if w.port() != 0 && w.port() != n.addr.port() => Err(Error::new(
                    FI_EADDRINUSE,
                    format!(
                        "this fabric already listens at {} (one address per fabric), not {w}",
                        n.addr
                    ),
                )),
                _ => Ok(n.clone()),
            };
        }
        let want = want.unwrap_or(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0));
        let ctx = if self.shared {
            let mut nics = PROCESS_NICS.lock().unwrap_or_else(|e| e.into_inner());
            let i = self.link as usize;
            match nics[i].as_ref().and_then(std::sync::Weak::upgrade) {
                Some(n) if want.port() == 0 || want.port() == n.addr.port() => n,
                Some(n) => {
                    return Err(Error::new(
                        FI_EADDRINUSE,
                        format!(
                            "this process's {} NIC listens at {}, not {want}",
                            self.link.name(),
                            n.addr
                        ),
                    ));
                }
                None => {
                    let n = Arc::new(self.open(want)?);
                    nics[i] = Some(Arc::downgrade(&n));
                    n
                }
            }
        } else {
            Arc::new(self.open(want)?)
        };
        *slot = Some(ctx.clone());
        Ok(ctx)
    }

    fn open(&self, want: SocketAddrV4) -> Result<NicCtx> {
        let nic = match self.link {
            Link::Tcp => Nic::open(&self.link.url(want))?,
            Link::Shm => {
                if !want.ip().is_loopback() {
                    return Err(Error::new(
                        FI_EADDRNOTAVAIL,
                        format!("shm reaches this host only: {want} is not a loopback address"),
                    ));
                }
                if want.port() != 0 {
                    Nic::open(&self.link.url(want))?
                } else {
                    open_any_shm()?
                }
            }
        };
        let addr = self.link.sockaddr_of(nic.address()).ok_or_else(|| {
            Error::new(
                FI_EADDRNOTAVAIL,
                format!("icn-via NIC at {} has no IPv4 address", nic.address()),
            )
        })?;
        let ptag = nic.create_ptag();
        Ok(NicCtx {
            nic,
            ptag,
            addr,
            link: self.link,
        })
    }
}

/// Opens an shm NIC at `shm://ofi-P` for a free port-like `P` in 1024..=65535, tried in a
/// random order (another process of the user may hold any one).
fn open_any_shm() -> Result<Nic> {
    let mut seed = [0u8; 8];
    let _ = getrandom_fill(&mut seed);
    let mut x = u64::from_ne_bytes(seed) | 1;
    let mut last = None;
    for _ in 0..SHM_TRIES {
        // xorshift: a few dozen distinct candidates, no repeats that matter.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let port = 1024 + (x % (65536 - 1024)) as u16;
        match Nic::open(&Link::Shm.url(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port))) {
            Ok(n) => return Ok(n),
            Err(ViaError::Io(e)) if e.kind() == std::io::ErrorKind::AddrInUse => {
                last = Some(e.to_string())
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(Error::new(
        FI_EADDRINUSE,
        format!(
            "no free shm name after {SHM_TRIES} tries ({})",
            last.unwrap_or_default()
        ),
    ))
}

/// Random bytes from the kernel (seeds the shm name search); the time if that fails.
fn getrandom_fill(b: &mut [u8; 8]) -> std::io::Result<()> {
    use std::io::Read;
    match std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(b)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
                ^ u64::from(std::process::id());
            *b = t.to_ne_bytes();
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_nic_per_fabric_and_a_second_port_is_refused() {
        let f = Fabric::private(Link::Shm);
        let a = f.nic(None).unwrap();
        assert!(a.addr.ip().is_loopback() && a.addr.port() >= 1024);
        let b = f
            .nic(Some(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)))
            .unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        let same = f.nic(Some(a.addr)).unwrap();
        assert!(Arc::ptr_eq(&a, &same));
        let other = SocketAddrV4::new(Ipv4Addr::LOCALHOST, a.addr.port() ^ 1);
        assert_eq!(f.nic(Some(other)).err().unwrap().code, FI_EADDRINUSE);
        // A second private fabric gets another name: both live at once.
        let g = Fabric::private(Link::Shm);
        assert_ne!(g.nic(None).unwrap().addr, a.addr);
    }

    #[test]
    fn fabrics_of_a_link_share_the_process_nic() {
        let (f, g) = (Fabric::new(Link::Tcp), Fabric::new(Link::Tcp));
        let a = f.nic(None).unwrap();
        assert!(Arc::ptr_eq(&a, &g.nic(None).unwrap()));
        let other = SocketAddrV4::new(Ipv4Addr::LOCALHOST, a.addr.port() ^ 1);
        assert_eq!(
            Fabric::new(Link::Tcp).nic(Some(other)).err().unwrap().code,
            FI_EADDRINUSE
        );
    }

    #[test]
    fn shm_refuses_a_non_loopback_address() {
        let f = Fabric::private(Link::Shm);
        let e = f
            .nic(Some(SocketAddrV4::new(Ipv4Addr::new(192, 0, 2, 1), 0)))
            .err()
            .unwrap();
        assert_eq!(e.code, FI_EADDRNOTAVAIL);
    }

    #[test]
    fn tcp_nic_reports_the_port_the_kernel_chose() {
        let f = Fabric::private(Link::Tcp);
        let n = f.nic(None).unwrap();
        assert_eq!(*n.addr.ip(), Ipv4Addr::LOCALHOST);
        assert_ne!(n.addr.port(), 0);
        assert_eq!(n.nic.address(), format!("tcp://{}", n.addr));
    }
}
