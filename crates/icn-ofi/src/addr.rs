//! Endpoint addresses: libfabric names endpoints by `struct sockaddr_in` (`FI_SOCKADDR_IN`),
//! icn-via by URL. `ofi_rxm` needs the sockaddr form: it identifies a peer by the address
//! of the connection request with the port replaced by the one its connection data carries,
//! and compares addresses to settle simultaneous connections.
//!
//! | link | icn-via URL | sockaddr |
//! |---|---|---|
//! | `tcp` | `tcp://A.B.C.D:P` | `A.B.C.D:P` |
//! | `shm` | `shm://ofi-P` (a socket in the user's private directory) | `127.0.0.1:P` |
//!
//! On shm the "port" is only a name in the user's private directory (the same namespace
//! for every process of the user on this host), so an shm address is always loopback.

use std::net::{Ipv4Addr, SocketAddrV4};

/// Which icn-via provider a fabric runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    Shm,
    Tcp,
}

impl Link {
    /// The fabric and domain name `fi_info` reports (and hints may ask for).
    pub fn name(self) -> &'static str {
        match self {
            Link::Shm => "shm",
            Link::Tcp => "tcp",
        }
    }

    /// The link named `name`, if any.
    pub fn from_name(name: &str) -> Option<Link> {
        match name {
            "shm" => Some(Link::Shm),
            "tcp" => Some(Link::Tcp),
            _ => None,
        }
    }

    /// The icn-via URL a NIC listening at `addr` has (port 0: any free one).
    pub fn url(self, addr: SocketAddrV4) -> String {
        match self {
            Link::Shm => format!("shm://{SHM_PREFIX}{}", addr.port()),
            Link::Tcp => format!("tcp://{addr}"),
        }
    }

    /// The sockaddr of an icn-via URL of this link (the inverse of [`Link::url`]).
    pub fn sockaddr_of(self, url: &str) -> Option<SocketAddrV4> {
        match self {
            Link::Shm => {
                let port: u16 = url
                    .strip_prefix("shm://")?
                    .strip_prefix(SHM_PREFIX)?
                    .parse()
                    .ok()?;
                (port != 0).then_some(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port))
            }
            Link::Tcp => url.strip_prefix("tcp://")?.parse().ok(),
        }
    }
}

/// What shm NIC names start with.
const SHM_PREFIX: &str = "ofi-";

/// `sizeof(struct sockaddr_in)`.
pub const SOCKADDR_IN_LEN: usize = 16;
/// `AF_INET` on Linux.
const AF_INET: u16 = 2;

/// `addr` as the bytes of a `struct sockaddr_in` (family in host order, port and address in
/// network order, 8 zero bytes).
pub fn encode(addr: SocketAddrV4) -> [u8; SOCKADDR_IN_LEN] {
    let mut b = [0u8; SOCKADDR_IN_LEN];
    b[0..2].copy_from_slice(&AF_INET.to_ne_bytes());
    b[2..4].copy_from_slice(&addr.port().to_be_bytes());
    b[4..8].copy_from_slice(&addr.ip().octets());
    b
}

/// The address in the bytes of a `struct sockaddr_in`; `None` if they are not one.
pub fn decode(b: &[u8]) -> Option<SocketAddrV4> {
    if b.len() < SOCKADDR_IN_LEN || u16::from_ne_bytes([b[0], b[1]]) != AF_INET {
        return None;
    }
    let port = u16::from_be_bytes([b[2], b[3]]);
    let ip = Ipv4Addr::new(b[4], b[5], b[6], b[7]);
    Some(SocketAddrV4::new(ip, port))
}

/// The address `node`/`service` of `fi_getinfo` name: a dotted IPv4 address or a host name
/// resolving to one (`None`: loopback), and a decimal port (`None`: 0, any).
pub fn resolve(node: Option<&str>, service: Option<&str>) -> Result<SocketAddrV4, String> {
    let port = match service {
        None => 0,
        Some(s) => s
            .parse::<u16>()
            .map_err(|_| format!("service {s:?} is not a port number (0..=65535)"))?,
    };
    let ip = match node {
        None => Ipv4Addr::LOCALHOST,
        Some(n) => match n.parse::<Ipv4Addr>() {
            Ok(ip) => ip,
            Err(_) => {
                use std::net::ToSocketAddrs;
                (n, port)
                    .to_socket_addrs()
                    .map_err(|e| format!("node {n:?}: {e}"))?
                    .find_map(|a| match a {
                        std::net::SocketAddr::V4(v4) => Some(*v4.ip()),
                        std::net::SocketAddr::V6(_) => None,
                    })
                    .ok_or_else(|| format!("node {n:?} has no IPv4 address"))?
            }
        },
    };
    Ok(SocketAddrV4::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockaddr_bytes_are_those_of_struct_sockaddr_in() {
        let a = SocketAddrV4::new(Ipv4Addr::new(10, 1, 2, 3), 0x1234);
        let b = encode(a);
        // Checked against libc's definition, field by field.
        let sin = libc::sockaddr_in {
            sin_family: libc::AF_INET as u16,
            sin_port: 0x1234u16.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from_ne_bytes([10, 1, 2, 3]),
            },
            sin_zero: [0; 8],
        };
        assert_eq!(std::mem::size_of::<libc::sockaddr_in>(), SOCKADDR_IN_LEN);
        // SAFETY: sockaddr_in is plain old data of SOCKADDR_IN_LEN bytes, no padding.
        let raw: [u8; SOCKADDR_IN_LEN] = unsafe { std::mem::transmute(sin) };
        assert_eq!(b, raw);
        assert_eq!(decode(&b), Some(a));
        assert_eq!(decode(&b[..15]), None);
        let mut wrong = b;
        wrong[0] = 10; // AF_INET6
        assert_eq!(decode(&wrong), None);
    }

    #[test]
    fn urls_and_sockaddrs_are_inverse_per_link() {
        let a = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 40001);
        assert_eq!(Link::Shm.url(a), "shm://ofi-40001");
        assert_eq!(Link::Shm.sockaddr_of("shm://ofi-40001"), Some(a));
        assert_eq!(Link::Tcp.url(a), "tcp://127.0.0.1:40001");
        assert_eq!(Link::Tcp.sockaddr_of("tcp://127.0.0.1:40001"), Some(a));
        assert_eq!(Link::Shm.sockaddr_of("shm://other"), None);
        assert_eq!(Link::Shm.sockaddr_of("shm://ofi-0"), None);
        assert_eq!(Link::Tcp.sockaddr_of("shm://ofi-1"), None);
        assert_eq!(Link::from_name("shm"), Some(Link::Shm));
        assert_eq!(Link::from_name("verbs"), None);
    }

    #[test]
    fn node_and_service_resolve_or_say_why_not() {
        assert_eq!(
            resolve(None, None),
            Ok(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0))
        );
        assert_eq!(
            resolve(Some("127.0.0.2"), Some("9000")),
            Ok(SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 2), 9000))
        );
        assert_eq!(
            resolve(Some("localhost"), Some("1")).map(|a| a.port()),
            Ok(1)
        );
        let e = resolve(None, Some("70000")).unwrap_err();
        assert!(e.contains("70000"), "{e}");
    }
}
