//! Up/down routing on a k-ary n-tree: climb to a nearest common ancestor of the source and
//! destination leaves, then descend the unique way down.
//!
//! A switch `w` on level `l` is an ancestor of leaf `v` when `w` and `v` agree in digits
//! `l..n−1` (base `k`). The decision needs only the switch and the destination:
//!
//! | at switch `w`, level `l`, destination terminal `t` on leaf `v = t / k` | hop |
//! |---|---|
//! | `l = 0` and `w = v` | down port `t mod k` (the terminal) |
//! | `w` is an ancestor of `v`, `l ≥ 1` | down port `v`'s digit `l − 1` |
//! | otherwise | an up port: `k + (t / kˡ) mod k` ([`UpPort::Destination`], "D-mod-k"), or any of the `k` ([`UpPort::Random`]) |
//!
//! A route climbs `L` levels and descends `L`, where `L` is one more than the highest digit in
//! which the leaves differ: `2L ≤ 2(n−1)` hops, the shortest possible. Every route is a run of
//! up channels followed by a run of down channels, and up channels only lead to higher levels,
//! down channels to lower ones, so the channel dependencies are acyclic with one VC class.

use super::{Header, Hop, Routing};
use crate::TopoError;
use crate::network::{Network, PortId, RouterId, Shape, TerminalId};
use rand::{Rng, RngCore};

/// How the up port is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpPort {
    /// Deterministic, spread by destination: port `k + (t / kˡ) mod k` on level `l`.
    Destination,
    /// Uniformly at random among the `k` up ports (the caller's RNG); all are candidates.
    Random,
    /// BookSim2's `anca`: two up ports drawn uniformly (possibly the same), the one with the
    /// shorter output queue taken, the first on a tie. Without queues (a simulator that does
    /// not pass them) it is [`UpPort::Random`].
    Adaptive,
}

/// Up/down routing on a fat tree.
#[derive(Clone, Debug)]
pub struct UpDown {
    k: u32,
    per_level: u32,
    up: UpPort,
}

impl UpDown {
    pub fn new(net: &Network, up: UpPort) -> Result<UpDown, TopoError> {
        match net.shape() {
            Shape::FatTree { k, n } => Ok(UpDown {
                k: *k,
                per_level: net.routers() / n,
                up,
            }),
            other => Err(TopoError::parameter(
                "up/down routing",
                format!("needs a fat tree, not {}", other.describe()),
            )),
        }
    }
}

/// A decision at a switch: down (or to the terminal) by this port, or up, by D-mod-k's port
/// `k + j` when the choice is by destination.
enum Step {
    Down(PortId),
    Up(u32),
}

impl UpDown {
    fn decide(&self, router: RouterId, t: TerminalId) -> Step {
        let k = self.k;
        let (l, w) = (router / self.per_level, router % self.per_level);
        let leaf = t / k;
        let scale = k.pow(l);
        if w / scale == leaf / scale {
            let port = if l == 0 {
                t % k
            } else {
                leaf / (scale / k) % k
            };
            Step::Down(port as PortId)
        } else {
            Step::Up(t / scale % k)
        }
    }

    fn up_hop(&self, j: u32) -> Hop {
        Hop {
            port: (self.k + j) as PortId,
            vc: 0,
        }
    }
}

impl Routing for UpDown {
    fn vc_classes(&self) -> u8 {
        1
    }

    fn by_router(&self) -> bool {
        self.up != UpPort::Destination
    }

    fn inject_choices(&self, _src: TerminalId, dst: TerminalId, emit: &mut dyn FnMut(Header)) {
        emit(Header::to(dst));
    }

    fn choices(&self, router: RouterId, header: &Header, emit: &mut dyn FnMut(Hop, Header)) {
        match (self.decide(router, header.dst), self.up) {
            (Step::Down(port), _) => emit(Hop { port, vc: 0 }, *header),
            (Step::Up(j), UpPort::Destination) => emit(self.up_hop(j), *header),
            (Step::Up(_), UpPort::Random | UpPort::Adaptive) => {
                for j in 0..self.k {
                    emit(self.up_hop(j), *header);
                }
            }
        }
    }

    /// One draw for a random up port instead of the default's two passes over `k` choices.
    fn next_hop(&self, router: RouterId, header: &mut Header, rng: &mut dyn RngCore) -> Hop {
        match (self.decide(router, header.dst), self.up) {
            (Step::Down(port), _) => Hop { port, vc: 0 },
            (Step::Up(j), UpPort::Destination) => self.up_hop(j),
            (Step::Up(_), UpPort::Random | UpPort::Adaptive) => {
                self.up_hop(rng.random_range(0..self.k))
            }
        }
    }

    fn adaptive(&self) -> bool {
        self.up == UpPort::Adaptive
    }

    /// `anca`: of two random up ports the less loaded (BookSim2's `GetUsedCredit`).
    fn next_hop_queued(
        &self,
        router: RouterId,
        header: &mut Header,
        rng: &mut dyn RngCore,
        queues: &[u32],
    ) -> Hop {
        match (self.decide(router, header.dst), self.up) {
            (Step::Up(_), UpPort::Adaptive) => {
                let a = rng.random_range(0..self.k);
                let b = rng.random_range(0..self.k);
                let q = |j: u32| queues.get((self.k + j) as usize).copied().unwrap_or(0);
                self.up_hop(if q(a) > q(b) { b } else { a })
            }
            _ => self.next_hop(router, header, rng),
        }
    }
}
