//! BookSim2's randomised and two-order routing functions on meshes and tori, with BookSim2's
//! semantics (its `routefunc.cpp`): each is dimension order towards a target, the target and
//! the VC class chosen so that every class carries one deadlock-free dimension-order phase.
//!
//! | routing | network | at injection | hops | VC classes |
//! |---|---|---|---|---|
//! | `xy_yx_mesh` | mesh | XY or YX, ½ each | dimension order, lowest dimension first (XY) or highest first (YX) | 2: XY 0, YX 1 |
//! | `romm_mesh` | mesh | an intermediate router drawn uniformly in the minimal box of source and destination, each coordinate between theirs inclusive (BookSim2's `rand_min_intr_mesh`) | dimension order to it (phase 0), then to the destination (phase 1) | 2: the phase |
//! | `valiant_mesh` | mesh | an intermediate router drawn uniformly among all | as `romm_mesh` | 2: the phase |
//! | `valiant_torus` | torus, ring | as `valiant_mesh` | each phase is BookSim2's `dim_order` on the torus towards its target (random tie at `k/2`, the class of a dimension's whole traversal 1 when the coordinate exceeds the target's) | 4: `2·partition + phase`, BookSim2's VC layout |
//!
//! The phase ends at the intermediate router itself (one drawn equal to the source or the
//! destination router ends it at once); there a torus packet enters its next dimension afresh.
//! Why one picks them: `xy_yx` spreads a permutation's load over two routes per pair at the
//! cost of a second class; ROMM keeps routes minimal but random (load spreading for
//! adversarial permutations such as transpose); Valiant balances any permutation at twice the
//! average hop count — on uniform traffic all three accept less than dimension order.
//!
//! The header's `via` is the intermediate router until it is reached ([`NO_VIA`] after);
//! `progress` is the dimension of the last hop + 1 on a torus (0: entering a dimension next).

use super::{Header, Hop, NO_VIA, Routing};
use crate::TopoError;
use crate::network::{Network, PortId, RouterId, Shape, TerminalId};
use rand::{Rng, RngCore};

/// Which of BookSim2's functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `xy_yx_mesh`.
    XyYx,
    /// `romm_mesh`.
    Romm,
    /// `valiant_mesh`, or `valiant_torus` on a torus.
    Valiant,
}

/// One of BookSim2's two-phase or two-order routing functions on a mesh or torus.
#[derive(Clone, Debug)]
pub struct TwoPhase {
    dims: Vec<u32>,
    wrap: bool,
    conc: u32,
    routers: u32,
    kind: Kind,
}

impl TwoPhase {
    /// `kind` on `net`: `XyYx` and `Romm` need a mesh, `Valiant` a mesh, torus or ring.
    pub fn new(net: &Network, kind: Kind) -> Result<TwoPhase, TopoError> {
        let name = match kind {
            Kind::XyYx => "xy_yx_mesh",
            Kind::Romm => "romm_mesh",
            Kind::Valiant => "valiant_mesh/valiant_torus",
        };
        match net.shape() {
            Shape::Cube { dims, wrap } if !*wrap || kind == Kind::Valiant => Ok(TwoPhase {
                dims: dims.clone(),
                wrap: *wrap,
                conc: u32::from(net.terminals_per_router()),
                routers: net.routers(),
                kind,
            }),
            other => Err(TopoError::parameter(
                "routing",
                format!(
                    "{name} (BookSim2's) needs a mesh{}, not {}",
                    if kind == Kind::Valiant {
                        " or torus"
                    } else {
                        ""
                    },
                    other.describe()
                ),
            )),
        }
    }

    /// Router `r`'s coordinate in dimension `i`.
    fn coord(&self, r: RouterId, i: usize) -> u32 {
        r / self.dims[..i].iter().product::<u32>() % self.dims[i]
    }

    /// The minimal box of `a` and `b` as per-dimension inclusive ranges.
    fn box_of(&self, a: RouterId, b: RouterId) -> Vec<(u32, u32)> {
        (0..self.dims.len())
            .map(|i| {
                let (x, y) = (self.coord(a, i), self.coord(b, i));
                (x.min(y), x.max(y))
            })
            .collect()
    }

    /// The router with coordinates `c`.
    fn router_at(&self, c: &[u32]) -> RouterId {
        let mut r = 0;
        for (i, &x) in c.iter().enumerate().rev() {
            r = r * self.dims[i] + x;
        }
        r
    }

    /// The hops of dimension order from `router` towards `target` (≠ `router`), lowest
    /// dimension first or (`descending`) highest first, in phase class `phase`.
    fn towards(
        &self,
        router: RouterId,
        target: RouterId,
        descending: bool,
        header: &Header,
        emit: &mut dyn FnMut(Hop, Header),
    ) {
        let n = self.dims.len();
        let i = (0..n)
            .map(|j| if descending { n - 1 - j } else { j })
            .find(|&i| self.coord(router, i) != self.coord(target, i))
            .expect("the target differs from the router");
        let (x, d, k) = (self.coord(router, i), self.coord(target, i), self.dims[i]);
        let port = |plus: bool| self.conc as PortId + 2 * i as PortId + PortId::from(!plus);
        let phase = u8::from(header.via == NO_VIA);
        if !self.wrap {
            let vc = match self.kind {
                Kind::XyYx => header.vc,
                _ => phase,
            };
            emit(
                Hop {
                    port: port(d > x),
                    vc,
                },
                Header { vc, ..*header },
            );
            return;
        }
        // valiant_torus: BookSim2's dor_next_torus with its partition, per phase.
        let dim = i as u8 + 1;
        let entering = header.progress != dim;
        let vc = if entering {
            2 * u8::from(x > d) + phase
        } else {
            header.vc
        };
        let next = Header {
            vc,
            progress: dim,
            ..*header
        };
        let fwd = (d + k - x) % k;
        super::dor::torus_direction(entering, fwd, k, (port(true), port(false)), vc, next, emit);
    }
}

impl Routing for TwoPhase {
    fn vc_classes(&self) -> u8 {
        if self.wrap { 4 } else { 2 }
    }

    fn by_router(&self) -> bool {
        true
    }

    fn inject_choices(&self, src: TerminalId, dst: TerminalId, emit: &mut dyn FnMut(Header)) {
        let h = Header::to(dst);
        match self.kind {
            Kind::XyYx => {
                emit(h);
                emit(Header { vc: 1, ..h });
            }
            Kind::Valiant => (0..self.routers).for_each(|via| emit(Header { via, ..h })),
            Kind::Romm => {
                let bounds = self.box_of(src / self.conc, dst / self.conc);
                let mut c: Vec<u32> = bounds.iter().map(|b| b.0).collect();
                loop {
                    emit(Header {
                        via: self.router_at(&c),
                        ..h
                    });
                    // Next coordinate vector of the box (odometer order).
                    let Some(i) = (0..c.len()).find(|&i| c[i] < bounds[i].1) else {
                        return;
                    };
                    c[i] += 1;
                    c[..i].iter_mut().zip(&bounds).for_each(|(x, b)| *x = b.0);
                }
            }
        }
    }

    /// One draw instead of enumerating the choices: BookSim2's order of draws.
    fn inject(
        &self,
        src: TerminalId,
        dst: TerminalId,
        rng: &mut dyn RngCore,
        _queues: &[u32],
    ) -> Header {
        let h = Header::to(dst);
        match self.kind {
            Kind::XyYx => Header {
                vc: u8::from(rng.random::<bool>()),
                ..h
            },
            Kind::Valiant => Header {
                via: rng.random_range(0..self.routers),
                ..h
            },
            Kind::Romm => {
                let c: Vec<u32> = self
                    .box_of(src / self.conc, dst / self.conc)
                    .into_iter()
                    .map(|(lo, hi)| rng.random_range(lo..=hi))
                    .collect();
                Header {
                    via: self.router_at(&c),
                    ..h
                }
            }
        }
    }

    fn choices(&self, router: RouterId, header: &Header, emit: &mut dyn FnMut(Hop, Header)) {
        let mut h = *header;
        if h.via == router {
            // Phase 1 starts here: a torus packet enters its next dimension afresh.
            h.via = NO_VIA;
            h.progress = 0;
        }
        let dst_router = h.dst / self.conc;
        let target = if h.via == NO_VIA { dst_router } else { h.via };
        if target == router {
            // Only at the destination in phase 1: eject.
            let port = (h.dst % self.conc) as PortId;
            emit(Hop { port, vc: h.vc }, h);
            return;
        }
        let descending = self.kind == Kind::XyYx && h.vc == 1;
        self.towards(router, target, descending, &h, emit);
    }
}
