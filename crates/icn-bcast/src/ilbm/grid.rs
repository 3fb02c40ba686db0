//! GridBrd: ILBM node algorithm for the 2-D mesh and torus (row first, then columns).
//!
//! Header `(hops, row)`: `row` = the message travels along the source's row.
//!
//! | node / arrival | sends, in order |
//! |----------------|-----------------|
//! | source | `E`, `W` (row waves), `N`, `S` (column waves) |
//! | row wave (from W / from E) | continue the row (`E` / `W`), then `N`, `S` |
//! | column wave (from S / from N) | continue the column (`N` / `S`) |
//!
//! On a torus the wave lengths are `⌈(w−1)/2⌉`/`⌊(w−1)/2⌋` along rows and likewise along
//! columns, so waves stop where they meet; on a mesh they run to the border (the missing
//! port is absent from the table). Time from `(x,y)`: row distance + 2 + column distance at
//! most, i.e. eccentricity + 2.

use super::{NodeAlgorithm, NodeInfo};
use icn_topo::Port;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridHeader {
    pub hops: usize,
    pub row: bool,
}

#[derive(Clone, Copy, Debug)]
pub struct GridBrd {
    pub w: usize,
    pub h: usize,
    pub wrap: bool,
}

impl GridBrd {
    /// Hop budgets of the two waves along a line of `len` nodes.
    fn waves(&self, len: usize) -> (usize, usize) {
        if self.wrap {
            ((len - 1).div_ceil(2), (len - 1) / 2)
        } else {
            (len, len)
        }
    }

    fn columns(&self) -> Vec<(Port, GridHeader)> {
        let (n, s) = self.waves(self.h);
        let mut out = Vec::new();
        if n > 0 {
            out.push((
                Port::North,
                GridHeader {
                    hops: n - 1,
                    row: false,
                },
            ));
        }
        if s > 0 {
            out.push((
                Port::South,
                GridHeader {
                    hops: s - 1,
                    row: false,
                },
            ));
        }
        out
    }
}

impl NodeAlgorithm for GridBrd {
    type Header = GridHeader;
    fn source(&self, _: NodeInfo) -> Vec<(Port, GridHeader)> {
        let (e, w) = self.waves(self.w);
        let mut out = Vec::new();
        if e > 0 {
            out.push((
                Port::East,
                GridHeader {
                    hops: e - 1,
                    row: true,
                },
            ));
        }
        if w > 0 {
            out.push((
                Port::West,
                GridHeader {
                    hops: w - 1,
                    row: true,
                },
            ));
        }
        out.extend(self.columns());
        out
    }
    fn receive(&self, _: NodeInfo, arrival: Port, hd: &GridHeader) -> Vec<(Port, GridHeader)> {
        let onward = match arrival {
            Port::West => Port::East,
            Port::East => Port::West,
            Port::South => Port::North,
            Port::North => Port::South,
            _ => return Vec::new(),
        };
        let mut out = Vec::new();
        if hd.hops > 0 {
            out.push((
                onward,
                GridHeader {
                    hops: hd.hops - 1,
                    row: hd.row,
                },
            ));
        }
        if hd.row {
            out.extend(self.columns());
        }
        out
    }
}
