//! What a graph or network specification will hold, from its text alone: a size the machine
//! cannot hold is refused before anything is built (`hypercube:22` used to spend 5.7 GB
//! building a graph before a bad source name or the run's own estimate could refuse it).
//!
//! | spec | sizes computed |
//! |---|---|
//! | graph specs ([`crate::spec`]) but `file:` | nodes, largest degree, directed links, the builder's peak bytes |
//! | network specs ([`crate::network::spec`]) but `graph:file:` | routers, radix, terminals, the wiring table's bytes (plus the graph's for `graph:`) |
//!
//! A file is not estimated: its size bounds what is built from it. Specs the builders would
//! refuse may still get a size here; the builder's message then names what is wrong.

use crate::graph::{Kind, Link};
use crate::network::FarEnd;

/// The size of a regular graph family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphSize {
    pub nodes: u128,
    pub max_degree: u128,
    /// Links counted from both ends (a graph's `2 × edge_count`).
    pub directed_links: u128,
}

impl GraphSize {
    /// The size of `kind`'s graph (`None` for a file graph).
    pub fn of(kind: Kind) -> Option<GraphSize> {
        let u = |x: usize| x as u128;
        let (nodes, max_degree, directed_links) = match kind {
            Kind::Ring { n } => (u(n), 2, 2 * u(n)),
            Kind::Path { n } => (
                u(n),
                u(n.saturating_sub(1).min(2)),
                2 * u(n.saturating_sub(1)),
            ),
            Kind::Mesh { w, h } => (
                u(w) * u(h),
                u(w.saturating_sub(1).min(2) + h.saturating_sub(1).min(2)),
                2 * (u(h) * u(w.saturating_sub(1)) + u(w) * u(h.saturating_sub(1))),
            ),
            Kind::Torus { w, h } => (u(w) * u(h), 4, 4 * u(w) * u(h)),
            Kind::Hypercube { d } => {
                let n = 1u128.checked_shl(d).filter(|_| d < 100)?;
                (n, u128::from(d), n * u128::from(d))
            }
            Kind::Ccc { h, k } => {
                let cycles = 1u128.checked_shl(k).filter(|_| k < 100)?;
                let n = u(h) * cycles;
                let lateral = u(h.min(k as usize)) * cycles;
                (n, if k > 0 { 3 } else { 2 }, 2 * n + lateral)
            }
            Kind::File => return None,
        };
        Some(GraphSize {
            nodes,
            max_degree,
            directed_links,
        })
    }

    /// Bytes the built graph keeps: its links and an offset per node.
    pub fn graph_bytes(&self) -> u128 {
        let link = std::mem::size_of::<Link>() as u128;
        self.directed_links * link + (self.nodes + 1) * 8
    }

    /// Bytes held at the builder's peak: a list per node (grown by doubling from 4) beside
    /// the flat copy, and the connectivity search over the result (16 B per node).
    pub fn build_bytes(&self) -> u128 {
        let link = std::mem::size_of::<Link>() as u128;
        let capacity = if self.max_degree == 0 {
            0
        } else {
            self.max_degree.next_power_of_two().max(4)
        };
        self.nodes * (24 + capacity * link + 16) + self.graph_bytes()
    }
}

/// The size of the graph `spec` names, when it is a regular family.
pub fn graph_spec_size(spec: &str) -> Option<GraphSize> {
    GraphSize::of(crate::spec::spec_kind(spec)?)
}

/// The size of a switch network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetworkSize {
    pub routers: u128,
    /// Ports per router (the largest router's).
    pub radix: u128,
    pub terminals: u128,
    /// Bytes held at the builder's peak: the wiring table, and for `graph:` the graph's build.
    pub build_bytes: u128,
}

/// The size of the network `spec` names (see the module documentation).
pub fn network_spec_size(spec: &str) -> Option<NetworkSize> {
    let (family, args) = spec.split_once(':')?;
    let num = |s: &str| s.trim().parse::<u128>().ok();
    let list = |s: &str, sep: char| s.split(sep).map(num).collect::<Option<Vec<u128>>>();
    let grid = || -> Option<(Vec<u128>, u128)> {
        match args.split_once(',') {
            Some((d, c)) => Some((list(d, 'x')?, num(c)?)),
            None => Some((list(args, 'x')?, 1)),
        }
    };
    let product = |d: &[u128]| d.iter().try_fold(1u128, |a, &k| a.checked_mul(k));
    let sized = |routers: u128, radix: u128, terminals: u128, graph: u128| {
        Some(NetworkSize {
            routers,
            radix,
            terminals,
            build_bytes: routers.checked_mul(radix)? * std::mem::size_of::<FarEnd>() as u128
                + graph,
        })
    };
    match family.trim() {
        "mesh" | "torus" => {
            let (d, c) = grid()?;
            let routers = product(&d)?;
            sized(routers, c + 2 * d.len() as u128, routers * c, 0)
        }
        "flatfly" => {
            let (d, c) = grid()?;
            let routers = product(&d)?;
            let radix = d.iter().map(|k| k.saturating_sub(1)).sum::<u128>() + c;
            sized(routers, radix, routers * c, 0)
        }
        "ring" => {
            let n = num(args)?;
            sized(n, 3, n, 0)
        }
        "fattree" => match list(args, ',')?.as_slice() {
            &[k, n] if (1..=64).contains(&n) => {
                let per_level = k.checked_pow(n as u32 - 1)?;
                sized(n * per_level, 2 * k, per_level.checked_mul(k)?, 0)
            }
            _ => None,
        },
        "dragonfly" => {
            let numbers = match args.rsplit_once(',') {
                Some((rest, "palm" | "absolute")) => rest,
                _ => args,
            };
            let (p, a, h) = match *list(numbers, ',')?.as_slice() {
                [p] => (p, 2 * p, p),
                [p, a, h] => (p, a, h),
                _ => return None,
            };
            let groups = a.checked_mul(h)? + 1;
            let routers = a.checked_mul(groups)?;
            sized(
                routers,
                p + a.saturating_sub(1) + h,
                routers.checked_mul(p)?,
                0,
            )
        }
        "hypercube" => {
            let (d, c) = match *list(args, ',')?.as_slice() {
                [d] => (d, 1),
                [d, c] => (d, c),
                _ => return None,
            };
            let routers = 1u128.checked_shl(u32::try_from(d).ok().filter(|&d| d < 100)?)?;
            sized(routers, d + c, routers * c, 0)
        }
        "graph" => {
            let g = graph_spec_size(args)?;
            sized(g.nodes, g.max_degree + 1, g.nodes, g.build_bytes())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes from the text equal the built graph's, family by family.
    #[test]
    fn graph_sizes_equal_the_built_graphs() {
        for spec in [
            "ring:7",
            "path:1",
            "path:2",
            "path:9",
            "mesh:1x1",
            "mesh:1x5",
            "mesh:2x2",
            "mesh:6x4",
            "torus:3x5",
            "hypercube:1",
            "hypercube:6",
            "ccc:2,1",
            "ccc:2,2",
            "ccc:4,3",
            "ccc:5,2",
        ] {
            let g = crate::parse_graph_spec(spec).unwrap();
            let s = graph_spec_size(spec).unwrap();
            let degree = (0..g.len()).map(|v| g.links(v).len()).max().unwrap();
            assert_eq!(s.nodes, g.len() as u128, "{spec}");
            assert_eq!(s.max_degree, degree as u128, "{spec}");
            assert_eq!(s.directed_links, 2 * g.edge_count() as u128, "{spec}");
        }
        assert_eq!(graph_spec_size("file:/dev/null"), None);
        // Q22: 4 Mi nodes of 22 links (24 B each): 2.2 GB kept, 5.6 GB at the build's peak.
        let q = graph_spec_size("hypercube:22").unwrap();
        assert_eq!(q.graph_bytes(), (1 << 22) * 22 * 24 + ((1 << 22) + 1) * 8);
        assert_eq!(
            q.build_bytes(),
            (1 << 22) * (24 + 32 * 24 + 16) + q.graph_bytes()
        );
    }

    /// The sizes from the text equal the built network's, family by family.
    #[test]
    fn network_sizes_equal_the_built_networks() {
        for spec in [
            "mesh:4x4",
            "mesh:3x4x2,2",
            "torus:4x4",
            "torus:3x3x3,2",
            "flatfly:4x4",
            "flatfly:3x2,4",
            "ring:5",
            "fattree:2,3",
            "fattree:4,2",
            "dragonfly:2",
            "dragonfly:1,2,1,absolute",
            "dragonfly:2,4,2,palm",
            "hypercube:4",
            "hypercube:3,2",
            "graph:ccc:4,3",
            "graph:mesh:3x3",
        ] {
            let n = crate::parse_network_spec(spec).unwrap();
            let s = network_spec_size(spec).unwrap();
            assert_eq!(s.routers, u128::from(n.routers()), "{spec}");
            assert_eq!(s.radix, u128::from(n.radix()), "{spec}");
            assert_eq!(s.terminals, u128::from(n.terminals()), "{spec}");
            assert!(s.build_bytes >= n.table_bytes() as u128, "{spec}");
        }
        let q = network_spec_size("hypercube:22").unwrap();
        assert_eq!((q.routers, q.radix), (1 << 22, 23));
    }
}
