//! Dimension-order routing: correct the lowest dimension that differs first.
//!
//! | network | hop in dimension `i` (coordinate `x`, destination's `d`) |
//! |---|---|
//! | mesh | `+` if `d > x`, else `−` |
//! | torus, ring | the shorter way round; `+` on a tie (`k` even, `d − x ≡ k/2`) |
//! | flattened butterfly | straight to `d` (one hop per dimension) |
//! | hypercube | flip bit `i` (e-cube) |
//!
//! **Dateline VC classes on a torus** (Dally & Seitz 1987). Each ring's wrap-around link
//! (`k−1 → 0` going `+`, `0 → k−1` going `−`) is its dateline. A packet moves in class 0 until it
//! has crossed the dateline of the dimension it travels in, then in class 1; a new dimension
//! starts again in class 0. The wrap link itself is taken in class 0. Class-0 channels of a ring
//! then form a chain ending at the wrap link, which leads only into class 1, whose channels
//! never reach the wrap link again (a shortest route wraps at most once): no cycle, and dimension
//! order orders the rings. Without datelines ([`Vcs::Single`]) each ring is a cycle of channels.
//! Meshes, flattened butterflies and hypercubes need one class.
//!
//! **BookSim2's `dim_order` on a torus** ([`DimensionOrder::booksim`], routing name
//! `dim_order`) differs from the above (`dor`) in two ways, both decided when the packet turns
//! into a dimension (BookSim2's `dor_next_torus`, `partition` not balanced):
//! - a tie (`d − x ≡ k/2`) goes `+` or `−` at random, each with probability ½, so both
//!   directions of a ring carry the half-way traffic (`dor` sends it all `+`);
//! - the packet takes class 1 for its *whole* traversal of the dimension when `x > d` (its
//!   coordinate on entering exceeds the destination's), else class 0. Going `+` that is
//!   "the route will wrap"; going `−` BookSim2's test is the same comparison, so there class 1
//!   holds the routes that do *not* wrap. Either way each direction of a ring splits its
//!   routes into wrapping and non-wrapping ones, one class each: every route of one class is a
//!   stretch of one line of channels (the wrapping ones around the wrap link, of at most
//!   `k/2` hops; the others never touch it), so no class has a cycle.
//!
//! Why pick which: `dim_order` is the reference (BookSim2's results, and on uniform traffic it
//! spreads both the tie traffic over both directions and the packets over both classes from
//! the first hop, which is what lets an 8×8 torus accept ~0.53 flits/node/cycle); `dor` is
//! deterministic (no random draw per packet: one route per pair, reproducible by hand, the
//! policy of Dally & Seitz's dateline) and keeps a packet in class 0 until the wrap link, which
//! leaves class 1 mostly idle — the price is throughput.

use super::{Header, Hop, Routing};
use crate::TopoError;
use crate::network::{Network, PortId, RouterId, Shape, TerminalId};

/// VC classes of dimension-order routing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vcs {
    /// Everything in class 0 (deadlocks on a torus or ring).
    Single,
    /// Class 1 after crossing a dimension's dateline (torus and ring).
    Dateline,
    /// BookSim2's partition: the class of a whole dimension chosen on entering it, 1 when the
    /// coordinate exceeds the destination's (torus and ring).
    Partition,
}

/// Which way a torus hop goes when both ways round are equally short (`k` even).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ties {
    /// Always `+` (icnlab's `dor`: one route per pair).
    Plus,
    /// `+` or `−`, chosen at random on entering the dimension (BookSim2's `dim_order`).
    Random,
}

#[derive(Clone, Debug)]
enum Family {
    Cube { dims: Vec<u32>, wrap: bool },
    FlatFly { dims: Vec<u32> },
    Hypercube,
}

/// Dimension-order routing on a mesh, torus, ring, flattened butterfly or hypercube.
#[derive(Clone, Debug)]
pub struct DimensionOrder {
    family: Family,
    conc: u32,
    vcs: Vcs,
    ties: Ties,
}

const CROSSED: u8 = 0x80;

impl DimensionOrder {
    /// BookSim2's `dim_order` for `net`: random ties and [`Vcs::Partition`] on a torus or ring
    /// (or [`Vcs::Single`] when `classes` is 1), else the same routes as [`DimensionOrder::new`]
    /// with one class (BookSim2's `dim_order_mesh`).
    pub fn booksim(net: &Network, classes: u8) -> Result<DimensionOrder, TopoError> {
        let wrap = matches!(net.shape(), Shape::Cube { wrap: true, .. });
        let vcs = match classes {
            1 => Vcs::Single,
            2 if wrap => Vcs::Partition,
            n => {
                return Err(TopoError::parameter(
                    "routing",
                    format!("dim_order uses 1 VC class, or 2 on a torus or ring; got {n}"),
                ));
            }
        };
        let mut r = DimensionOrder::new(net, vcs)?;
        r.ties = Ties::Random;
        Ok(r)
    }

    /// Dimension-order routing for `net`; an error for a network of another family.
    pub fn new(net: &Network, vcs: Vcs) -> Result<DimensionOrder, TopoError> {
        let family = match net.shape() {
            Shape::Cube { dims, wrap } => Family::Cube {
                dims: dims.clone(),
                wrap: *wrap,
            },
            Shape::FlatFly { dims } => Family::FlatFly { dims: dims.clone() },
            Shape::Hypercube { .. } => Family::Hypercube,
            other => {
                return Err(TopoError::parameter(
                    "dimension-order routing",
                    format!(
                        "needs a mesh, torus, ring, flattened butterfly or hypercube, not {}",
                        other.describe()
                    ),
                ));
            }
        };
        Ok(DimensionOrder {
            family,
            conc: u32::from(net.terminals_per_router()),
            vcs,
            ties: Ties::Plus,
        })
    }

    fn eject(&self, header: &Header) -> (Hop, Header) {
        let port = (header.dst % self.conc) as PortId;
        (
            Hop {
                port,
                vc: header.vc,
            },
            *header,
        )
    }
}

/// BookSim2's direction in a torus dimension (`fwd` hops the + way round a ring of `k`): the
/// shorter way; at exactly half way a packet entering the dimension is offered both ways (the
/// router draws one), and one already inside it keeps the way it took. `ports` = (+, −).
pub(super) fn torus_direction(
    entering: bool,
    fwd: u32,
    k: u32,
    ports: (PortId, PortId),
    vc: u8,
    next: Header,
    emit: &mut dyn FnMut(Hop, Header),
) {
    let (plus, minus) = ports;
    if entering && 2 * fwd == k {
        emit(Hop { port: plus, vc }, next);
        emit(Hop { port: minus, vc }, next);
    } else {
        let port = if 2 * fwd < k { plus } else { minus };
        emit(Hop { port, vc }, next);
    }
}

impl DimensionOrder {
    /// The hops in dimension `i` (coordinate `x`, destination's `d ≠ x`, side `k`).
    #[allow(clippy::too_many_arguments)]
    fn cube_hops(
        &self,
        i: usize,
        x: u32,
        d: u32,
        k: u32,
        wrap: bool,
        header: &Header,
        emit: &mut dyn FnMut(Hop, Header),
    ) {
        let c = self.conc as PortId;
        let dim = i as u8 + 1;
        let port = |plus: bool| c + 2 * i as PortId + PortId::from(!plus);
        let fwd = (d + k - x) % k;
        if !wrap {
            let hop = Hop {
                port: port(d > x),
                vc: 0,
            };
            emit(hop, Header { vc: 0, ..*header });
            return;
        }
        if self.vcs == Vcs::Partition || self.ties == Ties::Random {
            // Entering the dimension: the direction (a tie drawn) and, for the partition, the
            // class of the whole traversal; within it: the same direction and class.
            let entering = header.progress != dim;
            let vc = match self.vcs {
                Vcs::Partition if entering => u8::from(x > d),
                Vcs::Partition => header.vc,
                _ => 0,
            };
            let next = Header {
                vc,
                progress: dim,
                ..*header
            };
            torus_direction(entering, fwd, k, (port(true), port(false)), vc, next, emit);
            return;
        }
        let plus = fwd <= k / 2;
        let wraps = if plus { x == k - 1 } else { x == 0 };
        let crossed = header.progress == dim | CROSSED;
        let vc = u8::from(crossed && self.vcs == Vcs::Dateline);
        let progress = dim | if crossed || wraps { CROSSED } else { 0 };
        emit(
            Hop {
                port: port(plus),
                vc,
            },
            Header {
                vc,
                progress,
                ..*header
            },
        );
    }
}

impl Routing for DimensionOrder {
    fn vc_classes(&self) -> u8 {
        match self.vcs {
            Vcs::Single => 1,
            Vcs::Dateline | Vcs::Partition => 2,
        }
    }

    fn by_router(&self) -> bool {
        true
    }

    fn inject_choices(&self, _src: TerminalId, dst: TerminalId, emit: &mut dyn FnMut(Header)) {
        emit(Header::to(dst));
    }

    fn choices(&self, router: RouterId, header: &Header, emit: &mut dyn FnMut(Hop, Header)) {
        let dst_router = header.dst / self.conc;
        let c = self.conc as PortId;
        let (hop, next) = match &self.family {
            Family::Hypercube => {
                let diff = router ^ dst_router;
                if diff == 0 {
                    self.eject(header)
                } else {
                    let hop = Hop {
                        port: c + diff.trailing_zeros() as PortId,
                        vc: 0,
                    };
                    (hop, Header { vc: 0, ..*header })
                }
            }
            Family::FlatFly { dims } => {
                let (mut stride, mut base) = (1u32, c);
                let mut out = None;
                for &k in dims {
                    let (x, d) = (router / stride % k, dst_router / stride % k);
                    if x != d {
                        let port = base + if d < x { d } else { d - 1 } as PortId;
                        out = Some((Hop { port, vc: 0 }, Header { vc: 0, ..*header }));
                        break;
                    }
                    stride *= k;
                    base += (k - 1) as PortId;
                }
                out.unwrap_or_else(|| self.eject(header))
            }
            Family::Cube { dims, wrap } => {
                let mut stride = 1u32;
                for (i, &k) in dims.iter().enumerate() {
                    let (x, d) = (router / stride % k, dst_router / stride % k);
                    if x != d {
                        self.cube_hops(i, x, d, k, *wrap, header, emit);
                        return;
                    }
                    stride *= k;
                }
                self.eject(header)
            }
        };
        emit(hop, next);
    }
}
