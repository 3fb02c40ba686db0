//! CubeBrd: ILBM node algorithm for the hypercube Q_d (binomial spanning tree).
//!
//! | node | sends, in order |
//! |------|-----------------|
//! | source | `D(d−1)`, `D(d−2)`, …, `D0` |
//! | received on `Di` | `D(i−1)`, …, `D0` |
//!
//! No counters are needed: the arrival dimension says which subcube the node must cover.
//! Broadcast time is `d`, the optimum (⌈log2 2^d⌉ = d).

use super::{NodeAlgorithm, NodeInfo};
use icn_topo::Port;

#[derive(Clone, Copy, Debug)]
pub struct CubeBrd {
    pub d: u32,
}

fn dims_below(i: u32) -> Vec<(Port, ())> {
    (0..i).rev().map(|j| (Port::Dim(j as u8), ())).collect()
}

impl NodeAlgorithm for CubeBrd {
    type Header = ();
    fn source(&self, _: NodeInfo) -> Vec<(Port, ())> {
        dims_below(self.d)
    }
    fn receive(&self, _: NodeInfo, arrival: Port, _: &()) -> Vec<(Port, ())> {
        match arrival {
            Port::Dim(i) => dims_below(u32::from(i)),
            _ => Vec::new(),
        }
    }
}
