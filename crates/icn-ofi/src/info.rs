//! What the provider offers (`fi_getinfo`): one `fi_info` per link (shm, then tcp), each
//! attribute what the code does, and the matching of an application's hints against it.
//!
//! The hints are read into [`Hints`] by the C entry point; matching and the offer are plain
//! Rust; `crate::abi` writes the offer into `malloc`ed `fi_info`s (libfabric frees them
//! with `fi_freeinfo`, i.e. `free`).

use std::net::SocketAddrV4;

use crate::addr::Link;
use crate::ep::QUEUE_DEPTH;
use crate::sys;

/// Provider name (`FI_PROVIDER=icnvia`).
pub const PROV_NAME: &str = "icnvia";
/// Provider version reported by `fi_info` (`prov_version`, major << 16 | minor): 0.1.
pub const PROV_VERSION: u32 = 1;
/// libfabric API the provider is written against.
pub const FI_API_VERSION: u32 = (1 << 16) | 17;

/// Capabilities: messages and RDMA read/write, both directions.
pub const PRIMARY_CAPS: u64 = sys::FI_MSG as u64
    | sys::FI_RMA as u64
    | sys::FI_SEND as u64
    | sys::FI_RECV as u64
    | sys::FI_READ as u64
    | sys::FI_WRITE as u64
    | sys::FI_REMOTE_READ as u64
    | sys::FI_REMOTE_WRITE as u64;

/// Memory registration: the application registers what it sends from and receives into
/// (`FI_MR_LOCAL`: icn-via checks every segment against its registration table), keys are
/// the provider's (icn-via's random handles), RMA addresses are virtual addresses.
pub const MR_MODE: u32 =
    sys::FI_MR_LOCAL | sys::FI_MR_VIRT_ADDR | sys::FI_MR_ALLOCATED | sys::FI_MR_PROV_KEY;

/// Message ordering of one VI (an ordered byte stream on both links): sends after sends,
/// writes after writes, and each after the other.
pub const MSG_ORDER: u64 =
    (sys::FI_ORDER_SAS | sys::FI_ORDER_WAW | sys::FI_ORDER_SAW | sys::FI_ORDER_WAS) as u64;
/// Scatter/gather entries per operation (icn-via's `MAX_SEGMENTS`).
pub const IOV_LIMIT: usize = icn_via::attrs::MAX_SEGMENTS;
/// Largest message (icn-via's `MAX_TRANSFER_SIZE`, 1 GiB).
pub const MAX_MSG_SIZE: usize = icn_via::attrs::MAX_TRANSFER_SIZE as usize;

impl Link {
    /// Capabilities of the link: shm reaches this host only.
    pub fn caps(self) -> u64 {
        PRIMARY_CAPS
            | match self {
                Link::Shm => sys::FI_LOCAL_COMM,
                Link::Tcp => sys::FI_LOCAL_COMM | sys::FI_REMOTE_COMM,
            }
    }
}

/// The parts of an application's hints the provider looks at.
#[derive(Debug, Clone, Default)]
pub struct Hints {
    pub caps: u64,
    pub addr_format: u32,
    pub src: Option<Vec<u8>>,
    pub dest: Option<Vec<u8>>,
    pub ep_type: u32,
    pub max_msg_size: usize,
    pub tx_ctx_cnt: usize,
    pub rx_ctx_cnt: usize,
    pub fabric_name: Option<String>,
    /// `None`: no `domain_attr` in the hints.
    pub domain: Option<DomainHints>,
    pub tx_size: usize,
    pub tx_iov_limit: usize,
    pub tx_inject_size: usize,
    pub tx_msg_order: u64,
    pub rx_size: usize,
    pub rx_iov_limit: usize,
    pub rx_msg_order: u64,
}

#[derive(Debug, Clone, Default)]
pub struct DomainHints {
    pub name: Option<String>,
    pub mr_mode: i32,
    pub data_progress: u32,
}

/// One `fi_info` to return.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub link: Link,
    pub caps: u64,
    /// Queue sizes: the hints' if they ask for less than [`QUEUE_DEPTH`].
    pub tx_size: usize,
    pub rx_size: usize,
    pub src: Option<SocketAddrV4>,
    pub dest: Option<SocketAddrV4>,
}

/// Why hints exclude a link (for `FI_LOG_LEVEL=info`-style diagnostics and the tests).
pub fn mismatch(h: &Hints, link: Link) -> Option<String> {
    let extra = h.caps & !link.caps();
    if extra != 0 {
        return Some(format!("capabilities {extra:#x} not offered"));
    }
    if h.ep_type != sys::FI_EP_UNSPEC && h.ep_type != sys::FI_EP_MSG {
        return Some(format!("endpoint type {} (only FI_EP_MSG)", h.ep_type));
    }
    if ![sys::FI_FORMAT_UNSPEC, sys::FI_SOCKADDR, sys::FI_SOCKADDR_IN].contains(&h.addr_format) {
        return Some(format!(
            "address format {} (only FI_SOCKADDR_IN)",
            h.addr_format
        ));
    }
    if h.fabric_name.as_deref().is_some_and(|n| n != link.name()) {
        return Some(format!("fabric {:?}", h.fabric_name));
    }
    if let Some(d) = &h.domain {
        if d.name.as_deref().is_some_and(|n| n != link.name()) {
            return Some(format!("domain {:?}", d.name));
        }
        if (d.mr_mode as u32) & MR_MODE != MR_MODE {
            return Some(format!(
                "mr_mode {:#x} lacks FI_MR_LOCAL|FI_MR_VIRT_ADDR|FI_MR_ALLOCATED|FI_MR_PROV_KEY",
                d.mr_mode
            ));
        }
        if d.data_progress == sys::FI_PROGRESS_AUTO {
            return Some("FI_PROGRESS_AUTO data progress (progress is manual)".into());
        }
    }
    if h.max_msg_size > MAX_MSG_SIZE {
        return Some(format!("max_msg_size {} > {MAX_MSG_SIZE}", h.max_msg_size));
    }
    // FI_SHARED_CONTEXT (-1) and more than one context are not offered.
    if h.tx_ctx_cnt > 1 || h.rx_ctx_cnt > 1 {
        return Some("shared or multiple contexts".into());
    }
    if h.tx_size > QUEUE_DEPTH || h.rx_size > QUEUE_DEPTH {
        return Some(format!(
            "queue sizes {}/{} > {QUEUE_DEPTH}",
            h.tx_size, h.rx_size
        ));
    }
    if h.tx_iov_limit > IOV_LIMIT || h.rx_iov_limit > IOV_LIMIT {
        return Some(format!("iov limits > {IOV_LIMIT}"));
    }
    if h.tx_inject_size > 0 {
        return Some("inject (no inject buffer: inject_size is 0)".into());
    }
    if (h.tx_msg_order | h.rx_msg_order) & !MSG_ORDER != 0 {
        return Some("message orderings not offered".into());
    }
    None
}

/// The queue size to offer for a hinted one (0: none asked).
fn queue_size(hint: usize) -> usize {
    if hint == 0 {
        QUEUE_DEPTH
    } else {
        hint.min(QUEUE_DEPTH)
    }
}

/// The links to offer: `FI_ICNVIA_LINK` (`shm` or `tcp`) picks one, else both, shm first.
pub fn links(env: Option<&str>) -> Vec<Link> {
    match env.and_then(Link::from_name) {
        Some(l) => vec![l],
        None => vec![Link::Shm, Link::Tcp],
    }
}

/// The offers for `hints` (`None`: no hints) with addresses already resolved: `src` /
/// `dest` from node+service (per `FI_SOURCE`) or the hints' own addresses.
pub fn offers(
    hints: Option<&Hints>,
    links: &[Link],
    src: Option<SocketAddrV4>,
    dest: Option<SocketAddrV4>,
) -> Vec<Offer> {
    links
        .iter()
        .filter(|l| hints.is_none_or(|h| mismatch(h, **l).is_none()))
        // shm cannot reach another host.
        .filter(|l| **l != Link::Shm || dest.is_none_or(|d| d.ip().is_loopback()))
        .map(|&link| Offer {
            link,
            caps: hints
                .filter(|h| h.caps != 0)
                .map_or(link.caps(), |h| h.caps | (link.caps() & !PRIMARY_CAPS)),
            tx_size: queue_size(hints.map_or(0, |h| h.tx_size)),
            rx_size: queue_size(hints.map_or(0, |h| h.rx_size)),
            src,
            dest,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn msg_hints() -> Hints {
        Hints {
            caps: sys::FI_MSG as u64,
            ep_type: sys::FI_EP_MSG,
            domain: Some(DomainHints {
                name: None,
                mr_mode: (MR_MODE | sys::FI_MR_ENDPOINT) as i32,
                data_progress: sys::FI_PROGRESS_MANUAL,
            }),
            ..Hints::default()
        }
    }

    #[test]
    fn no_hints_offers_both_links_with_all_capabilities() {
        let o = offers(None, &links(None), None, None);
        assert_eq!(
            o.iter().map(|o| o.link).collect::<Vec<_>>(),
            [Link::Shm, Link::Tcp]
        );
        assert_eq!(o[0].caps & sys::FI_REMOTE_COMM, 0, "shm is local only");
        assert_ne!(o[1].caps & sys::FI_REMOTE_COMM, 0);
        assert_eq!(links(Some("tcp")), [Link::Tcp]);
        assert_eq!(links(Some("bogus")), [Link::Shm, Link::Tcp]);
    }

    #[test]
    fn what_is_not_there_is_not_offered() {
        let ok = msg_hints();
        assert_eq!(mismatch(&ok, Link::Shm), None);
        let cases: Vec<(&str, Hints)> = vec![
            (
                "tagged",
                Hints {
                    caps: sys::FI_TAGGED as u64,
                    ..ok.clone()
                },
            ),
            (
                "atomics",
                Hints {
                    caps: sys::FI_ATOMIC as u64,
                    ..ok.clone()
                },
            ),
            (
                "rdm",
                Hints {
                    ep_type: sys::FI_EP_RDM,
                    ..ok.clone()
                },
            ),
            (
                "ipv6",
                Hints {
                    addr_format: sys::FI_SOCKADDR_IN6,
                    ..ok.clone()
                },
            ),
            (
                "inject",
                Hints {
                    tx_inject_size: 64,
                    ..ok.clone()
                },
            ),
            (
                "shared rx",
                Hints {
                    rx_ctx_cnt: usize::MAX,
                    ..ok.clone()
                },
            ),
            (
                "deep queue",
                Hints {
                    rx_size: QUEUE_DEPTH + 1,
                    ..ok.clone()
                },
            ),
            (
                "big msg",
                Hints {
                    max_msg_size: MAX_MSG_SIZE + 1,
                    ..ok.clone()
                },
            ),
            (
                "ordering",
                Hints {
                    tx_msg_order: sys::FI_ORDER_RAR as u64,
                    ..ok.clone()
                },
            ),
            (
                "domain",
                Hints {
                    domain: Some(DomainHints {
                        name: Some("verbs".into()),
                        ..ok.domain.clone().unwrap()
                    }),
                    ..ok.clone()
                },
            ),
            (
                "mr scalable",
                Hints {
                    domain: Some(DomainHints {
                        mr_mode: 0,
                        ..ok.domain.clone().unwrap()
                    }),
                    ..ok.clone()
                },
            ),
            (
                "auto progress",
                Hints {
                    domain: Some(DomainHints {
                        data_progress: sys::FI_PROGRESS_AUTO,
                        ..ok.domain.clone().unwrap()
                    }),
                    ..ok.clone()
                },
            ),
        ];
        for (what, h) in cases {
            assert!(mismatch(&h, Link::Shm).is_some(), "{what} matched");
        }
        let remote = Hints {
            caps: sys::FI_MSG as u64 | sys::FI_REMOTE_COMM,
            ..ok.clone()
        };
        assert!(mismatch(&remote, Link::Shm).is_some());
        assert_eq!(mismatch(&remote, Link::Tcp), None);
    }

    #[test]
    fn a_remote_destination_leaves_only_tcp() {
        let far = SocketAddrV4::new(Ipv4Addr::new(192, 0, 2, 7), 9);
        let o = offers(Some(&msg_hints()), &links(None), None, Some(far));
        assert_eq!(o.iter().map(|o| o.link).collect::<Vec<_>>(), [Link::Tcp]);
        assert_eq!(o[0].dest, Some(far));
        assert_eq!((o[0].tx_size, o[0].rx_size), (QUEUE_DEPTH, QUEUE_DEPTH));
        // Asked capabilities are returned (plus the link's secondary ones).
        assert_eq!(
            o[0].caps,
            sys::FI_MSG as u64 | sys::FI_LOCAL_COMM | sys::FI_REMOTE_COMM
        );
        let small = Hints {
            rx_size: 128,
            ..msg_hints()
        };
        let o = offers(Some(&small), &[Link::Shm], None, None);
        assert_eq!((o[0].tx_size, o[0].rx_size), (QUEUE_DEPTH, 128));
    }
}
