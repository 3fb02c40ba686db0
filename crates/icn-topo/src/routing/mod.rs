//! Routing functions: at each router, the output port and VC class of a packet's next hop,
//! computed from the router, the packet's [`Header`] and the family's parameters — per hop,
//! never from a table of all pairs, so they cost nothing per pair of nodes.
//!
//! They are sans-IO: no clock, no queues of their own. Random choices (Valiant's intermediate
//! group, a random fat-tree up port) come from the caller's RNG; congestion estimates (UGAL)
//! come from the caller as queue lengths. A simulator calls [`Routing::inject`] once when a
//! packet enters at its source router and [`Routing::next_hop`] at every router, the source
//! router included; the last hop's port is the destination terminal's.
//!
//! Every routing function also *enumerates* what it may do ([`Routing::inject_choices`],
//! [`Routing::choices`]): [`next_hop`](Routing::next_hop) picks among `choices`, and
//! [`inject`](Routing::inject) returns one of `inject_choices` (tested), so the deadlock
//! checker ([`crate::cdg`]), which builds its graph from the enumeration, sees every
//! dependency any choice — random, adaptive or congestion-driven — can create. A simulator with
//! an adaptive selection function picks among `choices` itself.
//!
//! | module | networks | function | VC classes |
//! |---|---|---|---|
//! | [`dor`] | mesh, torus, ring, flattened butterfly, hypercube | dimension order (shortest way round on a torus) | 1; 2 with dateline on a torus |
//! | [`updown`] | fat tree | up to a nearest common ancestor, then down; up port by destination or random | 1 |
//! | [`dragonfly`] | dragonfly | minimal, Valiant, UGAL-L | class = global hops taken: 2 minimal, 3 Valiant/UGAL |
//! | [`tree`] | any (graphs: CCC, edge lists) | up*/down* on a BFS tree | 1 |
//! | [`twophase`] | mesh, torus | BookSim2's `xy_yx`, `romm`, `valiant` (mesh and torus) | 2 (the phase or order); 4 on a torus |

pub mod dor;
pub mod dragonfly;
pub mod tree;
pub mod twophase;
pub mod updown;

use crate::network::{FarEnd, Network, PortId, RouterId, TerminalId};
use rand::{Rng, RngCore};

/// `Header::via` when the packet has no intermediate group to visit.
pub const NO_VIA: u32 = u32::MAX;

/// The routing state a packet carries: 12 bytes, copied into the packet at injection and
/// updated at every hop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Header {
    /// Destination terminal.
    pub dst: TerminalId,
    /// The intermediate group (dragonfly Valiant/UGAL) or router (mesh and torus Valiant,
    /// ROMM) still to visit, or [`NO_VIA`].
    pub via: u32,
    /// VC class of the hop last taken (0 before the first).
    pub vc: u8,
    /// Routing-specific progress: on a torus the dimension of the last hop + 1 and, in bit 7,
    /// whether the packet has crossed the dateline in it; on a dragonfly the global hops taken.
    pub progress: u8,
}

impl Header {
    /// A fresh header to `dst`.
    pub fn to(dst: TerminalId) -> Header {
        Header {
            dst,
            via: NO_VIA,
            vc: 0,
            progress: 0,
        }
    }
}

/// One hop: the output port and the VC class the packet uses on the channel behind it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hop {
    pub port: PortId,
    pub vc: u8,
}

/// A routing function on one network (built for it: using it on another is a logic error
/// that [`trace`] and the deadlock checker report as a bad hop). `Send + Sync` so that the
/// threads of a parallel simulation share one.
pub trait Routing: std::fmt::Debug + Send + Sync {
    /// Number of VC classes its hops use (classes are `0..vc_classes()`).
    fn vc_classes(&self) -> u8;

    /// Whether the choices depend on the source and destination terminals only through their
    /// routers (but for the final hop's port), so that the deadlock checker may follow one
    /// terminal per router. True for all but destination-spread (D-mod-k) up/down routing.
    fn by_router(&self) -> bool {
        false
    }

    /// Every header [`Routing::inject`] may return for a packet from `src` to `dst`.
    fn inject_choices(&self, src: TerminalId, dst: TerminalId, emit: &mut dyn FnMut(Header));

    /// The header of a packet entering the network at `src` for `dst`. `queues[port]` is the
    /// caller's congestion estimate (e.g. occupied flits) of each output port of the source
    /// router; only UGAL reads it, a missing entry counts as 0. The default takes the first of
    /// the choices (one for all deterministic functions).
    fn inject(
        &self,
        src: TerminalId,
        dst: TerminalId,
        rng: &mut dyn RngCore,
        queues: &[u32],
    ) -> Header {
        let _ = (rng, queues);
        let mut first = None;
        self.inject_choices(src, dst, &mut |h| {
            first.get_or_insert(h);
        });
        first.unwrap_or_else(|| Header::to(dst))
    }

    /// Every hop the packet with `header` may take at `router`, each with the header it has
    /// after that hop. At the destination router: the one hop to the destination terminal.
    fn choices(&self, router: RouterId, header: &Header, emit: &mut dyn FnMut(Hop, Header));

    /// The hop taken at `router`, `header` updated: one of [`Routing::choices`], drawn
    /// uniformly with `rng` when there are several (no draw when there is one).
    fn next_hop(&self, router: RouterId, header: &mut Header, rng: &mut dyn RngCore) -> Hop {
        let mut n = 0u32;
        let mut only = None;
        self.choices(router, header, &mut |hop, h| {
            n += 1;
            only = Some((hop, h));
        });
        if n > 1 {
            let pick = rng.random_range(0..n);
            let mut i = 0;
            self.choices(router, header, &mut |hop, h| {
                if i == pick {
                    only = Some((hop, h));
                }
                i += 1;
            });
        }
        let (hop, h) = only.expect("a routing function offers at least one hop");
        *header = h;
        hop
    }

    /// Whether the hop depends on the current router's congestion at every hop (BookSim2's
    /// `anca`): the simulator then calls [`Routing::next_hop_queued`] with the router's output
    /// queues. False for all others, so they cost the simulator no queue scan per hop.
    fn adaptive(&self) -> bool {
        false
    }

    /// [`Routing::next_hop`] given `queues[port]`, the caller's congestion estimate of each
    /// output port of `router` (as for [`Routing::inject`]). Still one of
    /// [`Routing::choices`]; the default ignores the queues.
    fn next_hop_queued(
        &self,
        router: RouterId,
        header: &mut Header,
        rng: &mut dyn RngCore,
        queues: &[u32],
    ) -> Hop {
        let _ = queues;
        self.next_hop(router, header, rng)
    }
}

/// Why a traced route failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    /// The routing function chose a port that is unused, out of range or another terminal's.
    #[error("bad hop at {at}: {message}")]
    BadHop { at: String, message: String },
    /// The route did not reach its destination within the hop limit.
    #[error("route from terminal {src} to {dst} not delivered within {limit} hops")]
    TooLong {
        src: TerminalId,
        dst: TerminalId,
        limit: usize,
    },
}

/// Follows a packet from `src` to `dst` through `net`'s wiring: the `(router, hop)` pairs of
/// its route, the last being the ejection to `dst`. At most `limit` router-to-router hops.
pub fn trace(
    net: &Network,
    routing: &dyn Routing,
    src: TerminalId,
    dst: TerminalId,
    rng: &mut dyn RngCore,
    queues: &[u32],
    limit: usize,
) -> Result<Vec<(RouterId, Hop)>, RouteError> {
    let (mut router, _) = net.terminal_at(src);
    let mut header = routing.inject(src, dst, rng, queues);
    let mut route = Vec::new();
    loop {
        let hop = routing.next_hop(router, &mut header, rng);
        route.push((router, hop));
        let bad = |message: String| RouteError::BadHop {
            at: net.port_name(router, hop.port.min(net.radix().saturating_sub(1))),
            message,
        };
        if hop.port >= net.radix() {
            return Err(bad(format!("port {} ≥ radix {}", hop.port, net.radix())));
        }
        if hop.vc >= routing.vc_classes() {
            return Err(bad(format!(
                "VC class {} ≥ {}",
                hop.vc,
                routing.vc_classes()
            )));
        }
        match net.end(router, hop.port) {
            FarEnd::Terminal(t) if t == dst => return Ok(route),
            FarEnd::Terminal(t) => return Err(bad(format!("ejects to terminal {t}, not {dst}"))),
            FarEnd::Unused => return Err(bad("port is not wired".into())),
            FarEnd::Router { router: next, .. } => {
                if route.len() > limit {
                    return Err(RouteError::TooLong { src, dst, limit });
                }
                router = next;
            }
        }
    }
}

#[cfg(test)]
mod tests;
