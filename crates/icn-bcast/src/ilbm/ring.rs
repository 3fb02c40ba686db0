//! RingBrd: ILBM node algorithm for rings and paths.
//!
//! | node | sends, in order |
//! |------|-----------------|
//! | source | `F` with `hops = ⌈(n−1)/2⌉ − 1`, `B` with `hops = ⌊(n−1)/2⌋ − 1` (ring); both unbounded (path) |
//! | received on `B` (wave going forward) | `F` with `hops − 1` while `hops > 0` |
//! | received on `F` (wave going backward) | `B` with `hops − 1` while `hops > 0` |
//!
//! On a ring the two waves stop where they meet (no redundant message); time `⌈(n−1)/2⌉`...
//! more precisely `max(⌈(n−1)/2⌉, 1 + ⌊(n−1)/2⌋)` = `⌈n/2⌉`. On a path the missing port at an
//! end is simply absent from the table.

use super::{NodeAlgorithm, NodeInfo};
use icn_topo::Port;

#[derive(Clone, Copy, Debug)]
pub struct RingBrd {
    pub n: usize,
    /// `false` for a path: waves run until the end of the path.
    pub closed: bool,
}

impl NodeAlgorithm for RingBrd {
    type Header = usize;
    fn source(&self, _: NodeInfo) -> Vec<(Port, usize)> {
        if !self.closed {
            return vec![(Port::F, usize::MAX), (Port::B, usize::MAX)];
        }
        let rest = self.n - 1;
        let (f, b) = (rest.div_ceil(2), rest / 2);
        let mut out = Vec::new();
        if f > 0 {
            out.push((Port::F, f - 1));
        }
        if b > 0 {
            out.push((Port::B, b - 1));
        }
        out
    }
    fn receive(&self, _: NodeInfo, arrival: Port, hops: &usize) -> Vec<(Port, usize)> {
        let next = match arrival {
            Port::B => Port::F,
            Port::F => Port::B,
            _ => return Vec::new(),
        };
        if *hops > 0 {
            vec![(next, hops - 1)]
        } else {
            Vec::new()
        }
    }
}
