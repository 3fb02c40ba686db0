//! Dragonfly routing (Kim, Dally, Scott, Abts, ISCA 2008): minimal, Valiant and UGAL-L.
//!
//! **Minimal**, at router `i` of group `G`, towards group `T` (the destination's, or the
//! intermediate group while one is still to visit):
//!
//! | situation | hop |
//! |---|---|
//! | `G = T`, at the destination router | to the terminal |
//! | `G = T` | local link to the destination router |
//! | `G ≠ T`, this router owns the global link to `T` (link `m` of the group by the [`Arrangement`], owner `m / h`) | that global link |
//! | `G ≠ T` | local link to the owner |
//!
//! so at most local, global, local: 3 router hops.
//!
//! **Valiant** sends each inter-group packet minimally to a random intermediate group (uniform
//! over the `g − 2` groups that are neither the source's nor the destination's), then minimally
//! on: at most 5 hops. Intra-group packets go minimally (a detour cannot shorten one local hop).
//!
//! **UGAL-L** decides at the source between the minimal route and one Valiant route with a
//! random intermediate group: minimal when `q_min · H_min ≤ q_val · H_val + threshold`, where `q`
//! is the caller's queue estimate of the first hop's output port at the source router and `H`
//! the route's hop count (Kim et al. §4.2). Without estimates (`q = 0`) it routes minimally.
//!
//! **VC classes** (Kim et al. §4.3): a hop's class is the number of global hops taken before it,
//! so minimal routes use classes local 0, global 0, local 1 and Valiant routes
//! local 0, global 0, local 1, global 1, local 2. Each class's channels are then used by packets
//! that will take no more global hops in it than in the routes' order, and classes only
//! increase: no cycle with 2 classes for minimal, 3 for Valiant and UGAL. With fewer classes
//! ([`DragonflyRouting::with_vc_classes`]) the class is capped at the last one, and the
//! deadlock checker finds the cycles this creates.

use super::{Header, Hop, NO_VIA, Routing};
use crate::TopoError;
use crate::network::{Arrangement, Network, PortId, RouterId, Shape, TerminalId};
use rand::{Rng, RngCore};

/// Which dragonfly routing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    Minimal,
    Valiant,
    /// UGAL-L: minimal unless `q_min · H_min > q_val · H_val + threshold`.
    Ugal {
        threshold: u32,
    },
}

/// Minimal, Valiant or UGAL routing on a dragonfly.
#[derive(Clone, Debug)]
pub struct DragonflyRouting {
    p: u32,
    a: u32,
    h: u32,
    g: u32,
    arrangement: Arrangement,
    algorithm: Algorithm,
    classes: u8,
}

impl DragonflyRouting {
    /// The routing with the VC classes it needs (2 minimal, 3 Valiant and UGAL).
    pub fn new(net: &Network, algorithm: Algorithm) -> Result<DragonflyRouting, TopoError> {
        let Shape::Dragonfly {
            p,
            a,
            h,
            arrangement,
        } = *net.shape()
        else {
            return Err(TopoError::parameter(
                "dragonfly routing",
                format!("needs a dragonfly, not {}", net.shape().describe()),
            ));
        };
        let classes = match algorithm {
            Algorithm::Minimal => 2,
            Algorithm::Valiant | Algorithm::Ugal { .. } => 3,
        };
        Ok(DragonflyRouting {
            p,
            a,
            h,
            g: a * h + 1,
            arrangement,
            algorithm,
            classes,
        })
    }

    /// The same routing with `classes` VC classes (1..=8); fewer than it needs can deadlock.
    pub fn with_vc_classes(mut self, classes: u8) -> Result<DragonflyRouting, TopoError> {
        if !(1..=8).contains(&classes) {
            return Err(TopoError::parameter(
                "dragonfly routing",
                format!("VC classes must be in 1..=8, got {classes}"),
            ));
        }
        self.classes = classes;
        Ok(self)
    }

    /// The VC classes this algorithm needs to be deadlock-free.
    pub fn needed_vc_classes(&self) -> u8 {
        match self.algorithm {
            Algorithm::Minimal => 2,
            Algorithm::Valiant | Algorithm::Ugal { .. } => 3,
        }
    }

    fn group(&self, router: RouterId) -> u32 {
        router / self.a
    }

    /// The router of group `from` owning the global link to group `to`, and that link's port.
    fn exit(&self, from: u32, to: u32) -> (RouterId, PortId) {
        let m = self.arrangement.link_to(from, to, self.g);
        let port = self.p + self.a - 1 + m % self.h;
        (from * self.a + m / self.h, port as PortId)
    }

    /// The router of group `to` where the global link from group `from` lands.
    fn landing(&self, from: u32, to: u32) -> RouterId {
        to * self.a + self.arrangement.link_to(to, from, self.g) / self.h
    }

    fn local_port(&self, router: RouterId, to: RouterId) -> PortId {
        let (i, j) = (router % self.a, to % self.a);
        (self.p + if j < i { j } else { j - 1 }) as PortId
    }

    /// Minimal hop count and first port from `router` to router `dst`.
    fn minimal(&self, router: RouterId, dst: RouterId) -> (u32, PortId) {
        let (gs, gd) = (self.group(router), self.group(dst));
        if gs == gd {
            return (u32::from(router != dst), self.local_port(router, dst));
        }
        let (owner, port) = self.exit(gs, gd);
        let first = if owner == router {
            port
        } else {
            self.local_port(router, owner)
        };
        let hops = u32::from(owner != router) + 1 + u32::from(self.landing(gs, gd) != dst);
        (hops, first)
    }

    /// Hop count and first port of the Valiant route from `router` through group `via` to `dst`.
    fn valiant(&self, router: RouterId, via: u32, dst: RouterId) -> (u32, PortId) {
        let gs = self.group(router);
        let (owner, port) = self.exit(gs, via);
        let first = if owner == router {
            port
        } else {
            self.local_port(router, owner)
        };
        let to_via = u32::from(owner != router) + 1;
        let (rest, _) = self.minimal(self.landing(gs, via), dst);
        (to_via + rest, first)
    }

    /// Intermediate group number `x ∈ 0..g−2`, skipping the source and destination groups.
    fn nth_other_group(&self, x: u32, gs: u32, gd: u32) -> u32 {
        let (lo, hi) = (gs.min(gd), gs.max(gd));
        let mut v = x;
        if v >= lo {
            v += 1;
        }
        if v >= hi {
            v += 1;
        }
        v
    }
}

impl Routing for DragonflyRouting {
    fn vc_classes(&self) -> u8 {
        self.classes
    }

    fn by_router(&self) -> bool {
        true
    }

    fn inject_choices(&self, src: TerminalId, dst: TerminalId, emit: &mut dyn FnMut(Header)) {
        let (gs, gd) = (self.group(src / self.p), self.group(dst / self.p));
        let direct = Header::to(dst);
        if matches!(self.algorithm, Algorithm::Minimal | Algorithm::Ugal { .. })
            || gs == gd
            || self.g < 3
        {
            emit(direct);
        }
        if !matches!(self.algorithm, Algorithm::Minimal) && gs != gd {
            for x in 0..self.g.saturating_sub(2) {
                emit(Header {
                    via: self.nth_other_group(x, gs, gd),
                    ..direct
                });
            }
        }
    }

    fn inject(
        &self,
        src: TerminalId,
        dst: TerminalId,
        rng: &mut dyn RngCore,
        queues: &[u32],
    ) -> Header {
        let (rs, rd) = (src / self.p, dst / self.p);
        let (gs, gd) = (self.group(rs), self.group(rd));
        let direct = Header::to(dst);
        if self.algorithm == Algorithm::Minimal || gs == gd || self.g < 3 {
            return direct;
        }
        let via = self.nth_other_group(rng.random_range(0..self.g - 2), gs, gd);
        let valiant = Header { via, ..direct };
        let Algorithm::Ugal { threshold } = self.algorithm else {
            return valiant;
        };
        let q = |port: PortId| u64::from(queues.get(usize::from(port)).copied().unwrap_or(0));
        let (h_min, p_min) = self.minimal(rs, rd);
        let (h_val, p_val) = self.valiant(rs, via, rd);
        if q(p_min) * u64::from(h_min) <= q(p_val) * u64::from(h_val) + u64::from(threshold) {
            direct
        } else {
            valiant
        }
    }

    fn choices(&self, router: RouterId, header: &Header, emit: &mut dyn FnMut(Hop, Header)) {
        let mut next = *header;
        let here = self.group(router);
        if next.via == here {
            next.via = NO_VIA;
        }
        let dst_router = next.dst / self.p;
        let target = if next.via == NO_VIA {
            self.group(dst_router)
        } else {
            next.via
        };
        let class = next.progress.min(self.classes - 1);
        if router == dst_router && next.via == NO_VIA {
            let hop = Hop {
                port: (next.dst % self.p) as PortId,
                vc: next.vc,
            };
            emit(hop, next);
            return;
        }
        let port = if here == target {
            self.local_port(router, dst_router)
        } else {
            let (owner, port) = self.exit(here, target);
            if owner == router {
                next.progress += 1;
                port
            } else {
                self.local_port(router, owner)
            }
        };
        next.vc = class;
        emit(Hop { port, vc: class }, next);
    }
}
