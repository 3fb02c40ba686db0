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
}

const CROSSED: u8 = 0x80;

impl DimensionOrder {
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

impl Routing for DimensionOrder {
    fn vc_classes(&self) -> u8 {
        match self.vcs {
            Vcs::Single => 1,
            Vcs::Dateline => 2,
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
                let mut out = None;
                for (i, &k) in dims.iter().enumerate() {
                    let (x, d) = (router / stride % k, dst_router / stride % k);
                    if x != d {
                        let plus = if *wrap {
                            (d + k - x) % k <= k / 2
                        } else {
                            d > x
                        };
                        let wraps = *wrap && if plus { x == k - 1 } else { x == 0 };
                        let dim = i as u8 + 1;
                        let crossed = header.progress == dim | CROSSED;
                        let vc = u8::from(crossed && self.vcs == Vcs::Dateline);
                        let progress = dim | if crossed || wraps { CROSSED } else { 0 };
                        let port = c + 2 * i as PortId + PortId::from(!plus);
                        out = Some((
                            Hop { port, vc },
                            Header {
                                vc,
                                progress,
                                ..*header
                            },
                        ));
                        break;
                    }
                    stride *= k;
                }
                out.unwrap_or_else(|| self.eject(header))
            }
        };
        emit(hop, next);
    }
}
