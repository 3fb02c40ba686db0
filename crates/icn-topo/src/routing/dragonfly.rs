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
//!
//! **BookSim2's dragonfly routing** (`dragonflynew`, its names): the same minimal routes, other
//! VC classes and, for UGAL, another algorithm.
//!
//! | name | routes | VC class (BookSim2's `ph`) |
//! |---|---|---|
//! | `min_dragonflynew` | minimal | 0 in the source group, 1 from the global hop on (the global hop itself in 1, where `minimal` takes it in 0) |
//! | `ugal_dragonflynew` | at the source: a random intermediate *node* of the whole network; if it is in the source group, or the destination is, minimal; else minimal when `q_min ≤ 2·q_nonmin + 30` (queues: flits in the downstream buffers of the two first-hop ports; 30 is BookSim2's fixed `adaptive_threshold`, a bias to minimal), else minimally to the intermediate node's *router*, then minimally on | non-minimal 0 up to the intermediate router; then 1; 2 from the global hop on (intra-group packets 2 throughout) |
//! | `valiant_dragonflynew` | `ugal_dragonflynew` that never chooses minimal for an inter-group packet whose intermediate node lies outside the source group (not in upstream BookSim2: its UGAL with the threshold at −∞) | as `ugal_dragonflynew` |
//!
//! Why pick which: the BookSim2 functions reproduce BookSim2's figures; `minimal`, `valiant`
//! and `ugal` are Kim et al.'s: an intermediate *group* (never the source's or the
//! destination's), hop-count-weighted UGAL-L with threshold 0, and VC classes that the
//! deadlock check accepts. BookSim2's node-intermediate routes take the local hop to the
//! intermediate router in class 0, after a global hop, and class 0 also carries source-group
//! hops towards a global link: the channel-dependency graph has a cycle through class 0
//! (global link → local hop in the next group → that group's global link → …), which the
//! check reports; BookSim2 runs them unchecked, icnlab only with `allow_deadlock = true`.

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
    /// BookSim2's `min_dragonflynew`.
    BookSimMin,
    /// BookSim2's `ugal_dragonflynew` (its `adaptive_threshold` is 30).
    BookSimUgal {
        threshold: i32,
    },
    /// `valiant_dragonflynew`: BookSim2's UGAL always non-minimal.
    BookSimValiant,
}

impl Algorithm {
    fn needed_classes(self) -> u8 {
        match self {
            Algorithm::Minimal | Algorithm::BookSimMin => 2,
            _ => 3,
        }
    }

    fn booksim_node(self) -> bool {
        matches!(
            self,
            Algorithm::BookSimUgal { .. } | Algorithm::BookSimValiant
        )
    }
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
        let classes = algorithm.needed_classes();
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
        self.algorithm.needed_classes()
    }

    /// Whether `port` is a global link's.
    fn is_global(&self, port: PortId) -> bool {
        u32::from(port) >= self.p + self.a - 1
    }

    /// BookSim2's `dragonfly_port`: the first port of the minimal route from `router` to router
    /// `to` (≠ `router`).
    fn port_to(&self, router: RouterId, to: RouterId) -> PortId {
        self.minimal(router, to).1
    }

    /// BookSim2's node-intermediate UGAL/Valiant: one hop (`progress` is BookSim2's `ph`, `via`
    /// the intermediate router while `ph = 0`).
    fn booksim_node_hop(
        &self,
        router: RouterId,
        header: &Header,
        emit: &mut dyn FnMut(Hop, Header),
    ) {
        let mut next = *header;
        let dst_router = next.dst / self.p;
        if next.progress == 0 && router == next.via {
            next.progress = 1;
            next.via = NO_VIA;
        }
        if router == dst_router && next.progress != 0 {
            let hop = Hop {
                port: (next.dst % self.p) as PortId,
                vc: next.vc,
            };
            emit(hop, next);
            return;
        }
        let target = if next.progress == 0 {
            next.via
        } else {
            dst_router
        };
        let port = self.port_to(router, target);
        if next.progress == 1 && self.is_global(port) {
            next.progress = 2;
        }
        next.vc = next.progress.min(self.classes - 1);
        emit(Hop { port, vc: next.vc }, next);
    }

    /// The header of BookSim2's UGAL/Valiant at the source: `ph` 2 (intra-group), 1 (minimal)
    /// or 0 towards intermediate router `via`.
    fn booksim_header(dst: TerminalId, ph: u8, via: u32) -> Header {
        Header {
            dst,
            via,
            vc: 0,
            progress: ph,
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
        if self.algorithm.booksim_node() {
            if gs == gd {
                emit(Self::booksim_header(dst, 2, NO_VIA));
                return;
            }
            emit(Self::booksim_header(dst, 1, NO_VIA));
            for r in (0..self.g * self.a).filter(|&r| self.group(r) != gs) {
                emit(Self::booksim_header(dst, 0, r));
            }
            return;
        }
        if matches!(
            self.algorithm,
            Algorithm::Minimal | Algorithm::Ugal { .. } | Algorithm::BookSimMin
        ) || gs == gd
            || self.g < 3
        {
            emit(direct);
        }
        if !matches!(self.algorithm, Algorithm::Minimal | Algorithm::BookSimMin) && gs != gd {
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
        if self.algorithm.booksim_node() {
            if gs == gd {
                return Self::booksim_header(dst, 2, NO_VIA);
            }
            // RandomInt(_network_size − 1): any node, the source's group included.
            let node = rng.random_range(0..self.g * self.a * self.p);
            let via = node / self.p;
            if self.group(via) == gs {
                return Self::booksim_header(dst, 1, NO_VIA);
            }
            let nonmin = Self::booksim_header(dst, 0, via);
            let Algorithm::BookSimUgal { threshold } = self.algorithm else {
                return nonmin;
            };
            let q = |port: PortId| i64::from(queues.get(usize::from(port)).copied().unwrap_or(0));
            let q_min = q(self.port_to(rs, rd));
            let q_non = q(self.port_to(rs, via));
            return if q_min <= 2 * q_non + i64::from(threshold) {
                Self::booksim_header(dst, 1, NO_VIA)
            } else {
                nonmin
            };
        }
        if matches!(self.algorithm, Algorithm::Minimal | Algorithm::BookSimMin)
            || gs == gd
            || self.g < 3
        {
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
        if self.algorithm.booksim_node() {
            self.booksim_node_hop(router, header, emit);
            return;
        }
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
        // BookSim2's min takes the global hop itself in the class after it.
        let class = if self.algorithm == Algorithm::BookSimMin {
            next.progress.min(self.classes - 1)
        } else {
            class
        };
        next.vc = class;
        emit(Hop { port, vc: class }, next);
    }
}
