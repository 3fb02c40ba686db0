//! ILBM, the intelligent list broadcasting model: one neighbour table with the same layout at
//! every node plus one node algorithm shared by all nodes.
//!
//! A [`NodeAlgorithm`] is sans-IO: given what a node knows about itself ([`NodeInfo`]), the
//! port the message arrived on and the counters carried in the message, it returns the
//! ordered sends. [`Ilbm`] adapts any node algorithm to the step simulator.
//!
//! Algorithms: [`ccc::CccBrd`] (the paper's), [`grid::GridBrd`] (mesh and torus),
//! [`hypercube::CubeBrd`] (binomial tree by dimension), [`ring::RingBrd`] (ring and path).

pub mod ccc;
pub mod grid;
pub mod hypercube;
pub mod ring;

use crate::sim::{Protocol, Send};
use icn_topo::{Graph, NodeId, Port};

/// What a node knows about itself besides its table: its position in its cycle for CCC
/// (the paper's `getCycleId()`), 0 elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeInfo {
    pub position: usize,
}

/// A node algorithm of the ILBM.
pub trait NodeAlgorithm {
    /// Counters carried by the message.
    type Header: Clone + std::fmt::Debug;
    /// Ordered sends of the source.
    fn source(&self, me: NodeInfo) -> Vec<(Port, Self::Header)>;
    /// Ordered sends after the first reception, which arrived on `arrival` with `header`.
    fn receive(
        &self,
        me: NodeInfo,
        arrival: Port,
        header: &Self::Header,
    ) -> Vec<(Port, Self::Header)>;
}

/// A shared algorithm (e.g. CCCBrd with its plan table) is used by reference.
impl<A: NodeAlgorithm> NodeAlgorithm for &A {
    type Header = A::Header;
    fn source(&self, me: NodeInfo) -> Vec<(Port, Self::Header)> {
        (*self).source(me)
    }
    fn receive(
        &self,
        me: NodeInfo,
        arrival: Port,
        header: &Self::Header,
    ) -> Vec<(Port, Self::Header)> {
        (*self).receive(me, arrival, header)
    }
}

/// Runs a [`NodeAlgorithm`] in the simulator.
pub struct Ilbm<A>(pub A);

fn info(g: &Graph, v: NodeId) -> NodeInfo {
    NodeInfo {
        position: g.ccc_coords(v).map_or(0, |(_, p)| p),
    }
}

fn wrap<H>(sends: Vec<(Port, H)>) -> Vec<Send<H>> {
    sends
        .into_iter()
        .map(|(port, msg)| Send { port, msg })
        .collect()
}

impl<A: NodeAlgorithm> Protocol for Ilbm<A> {
    type Msg = A::Header;
    fn start(&mut self, g: &Graph, source: NodeId) -> Vec<Send<A::Header>> {
        wrap(self.0.source(info(g, source)))
    }
    fn on_receive(
        &mut self,
        g: &Graph,
        node: NodeId,
        _from: NodeId,
        arrival: Port,
        msg: &A::Header,
    ) -> Vec<Send<A::Header>> {
        wrap(self.0.receive(info(g, node), arrival, msg))
    }
}

/// Splits `rest` nodes of a cycle between two waves started one step apart, the first of
/// which is slowed by `delay` extra steps: returns the share of the first wave that makes
/// both finish as early as possible (ties favour the first wave).
///
/// The first wave covering `a` nodes finishes at `delay + a`, the second covering `rest − a`
/// finishes at `1 + rest − a`; the best `a` is the largest with `delay + a ≤ 1 + rest − a`,
/// or the balance point.
pub fn split_two_waves(rest: usize, delay: usize) -> usize {
    (0..=rest)
        .min_by_key(|&a| {
            let first = if a == 0 { 0 } else { delay + a };
            let second = if a == rest { 0 } else { 1 + rest - a };
            (first.max(second), usize::MAX - a)
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_balances_two_waves() {
        // Ring of 7 from one node: 6 others; the first wave takes 4 (done at step 4), the
        // second 2 (done at step 3): ⌈7/2⌉ = 4 steps.
        assert_eq!(split_two_waves(6, 0), 4);
        assert_eq!(split_two_waves(5, 0), 3);
        // A first wave slowed by 2 steps takes fewer nodes: 3 → done at 5, second 3 → done at 4.
        assert_eq!(split_two_waves(6, 2), 3);
        assert_eq!(split_two_waves(0, 0), 0);
        assert_eq!(split_two_waves(1, 5), 0);
    }
}
