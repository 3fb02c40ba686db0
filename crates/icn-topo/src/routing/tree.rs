//! Up*/down* routing on any network (Schroeder et al., Autonet, 1991): the routing for
//! networks converted from a [`crate::Graph`] (CCC, edge-list files), which have no
//! family-specific routing.
//!
//! A breadth-first search from a root router gives every router a level (its distance from the
//! root) and a parent one level up. A link is *up* when it leads to a lower level, *down* when
//! it leads to a higher one (links within a level are not used). Per hop, from the levels and
//! parents alone (10 bytes per router, plus a copy of the neighbour table):
//!
//! | at router `v`, destination router `d` | hop |
//! |---|---|
//! | `v = d` | to the terminal |
//! | `v` is an ancestor of `d` in the BFS tree | down, to the deepest neighbour that is an ancestor of `d` (or `d` itself): the tree child on the way, or a shortcut further down |
//! | otherwise | up: the parent ([`GraphUpDown::new`] with `adaptive = false`), or any neighbour one level up (`adaptive = true`; all are offered to the deadlock checker) |
//!
//! A route is a run of up hops followed by a run of down hops, at most `level(s) + level(d)
//! ≤ 2 · diameter` hops. Up hops lower the level and down hops raise it, and no down hop is
//! followed by an up hop (a packet in the down phase stays on ancestors of its destination),
//! so channel dependencies go from up channels of higher to lower levels, from up to down
//! channels, and from down channels of lower to higher levels: no cycle, with one VC class.
//! Routes are not minimal (they detour through a common ancestor); the root is router 0 unless
//! given.

use super::{Header, Hop, Routing};
use crate::TopoError;
use crate::network::{FarEnd, Network, PortId, RouterId, TerminalId};

const NONE: u32 = u32::MAX;

/// Up*/down* routing on a BFS tree of any network.
#[derive(Clone, Debug)]
pub struct GraphUpDown {
    radix: usize,
    conc: u32,
    /// `neighbour[router · radix + port]`: the router behind that port, or `NONE`.
    neighbour: Vec<u32>,
    level: Vec<u32>,
    parent: Vec<u32>,
    parent_port: Vec<PortId>,
    adaptive: bool,
}

impl GraphUpDown {
    /// Up*/down* from a BFS of `net` rooted at `root`; `adaptive` offers every up link, not
    /// only the tree parent's. An error for a root out of range or a disconnected network.
    pub fn new(net: &Network, root: RouterId, adaptive: bool) -> Result<GraphUpDown, TopoError> {
        let err = |m: String| TopoError::parameter("up*/down* routing", m);
        if root >= net.routers() {
            return Err(err(format!("root {root} ≥ {} routers", net.routers())));
        }
        let level = net.router_distances(root);
        if let Some(r) = level.iter().position(|&l| l == u32::MAX) {
            return Err(err(format!(
                "router {} is unreachable",
                net.router_name(r as u32)
            )));
        }
        let radix = usize::from(net.radix());
        let mut neighbour = vec![NONE; net.channels()];
        let mut parent = vec![NONE; level.len()];
        let mut parent_port = vec![0; level.len()];
        for r in 0..net.routers() {
            for (p, e) in net.ports(r).iter().enumerate() {
                if let FarEnd::Router { router, .. } = *e {
                    neighbour[r as usize * radix + p] = router;
                    let ri = r as usize;
                    if parent[ri] == NONE && level[router as usize] + 1 == level[ri] {
                        parent[ri] = router;
                        parent_port[ri] = p as PortId;
                    }
                }
            }
        }
        Ok(GraphUpDown {
            radix,
            conc: u32::from(net.terminals_per_router()),
            neighbour,
            level,
            parent,
            parent_port,
            adaptive,
        })
    }

    /// Whether `v` is `d` or a tree ancestor of `d`.
    fn ancestor(&self, v: u32, mut d: u32) -> bool {
        let lv = self.level[v as usize];
        while self.level[d as usize] > lv {
            d = self.parent[d as usize];
        }
        d == v
    }

    fn neighbours(&self, v: u32) -> impl Iterator<Item = (PortId, u32)> + '_ {
        let row = &self.neighbour[v as usize * self.radix..(v as usize + 1) * self.radix];
        row.iter()
            .enumerate()
            .filter(|(_, n)| **n != NONE)
            .map(|(p, &n)| (p as PortId, n))
    }
}

impl Routing for GraphUpDown {
    fn vc_classes(&self) -> u8 {
        1
    }

    fn by_router(&self) -> bool {
        true
    }

    fn inject_choices(&self, _src: TerminalId, dst: TerminalId, emit: &mut dyn FnMut(Header)) {
        emit(Header::to(dst));
    }

    fn choices(&self, router: RouterId, header: &Header, emit: &mut dyn FnMut(Hop, Header)) {
        let d = header.dst / self.conc;
        let hop = |port| Hop { port, vc: 0 };
        if router == d {
            emit(hop((header.dst % self.conc) as PortId), *header);
        } else if self.ancestor(router, d) {
            let lv = self.level[router as usize];
            let best = self
                .neighbours(router)
                .filter(|&(_, n)| self.level[n as usize] > lv && self.ancestor(n, d))
                .max_by_key(|&(p, n)| (self.level[n as usize], std::cmp::Reverse(p)));
            if let Some((port, _)) = best {
                emit(hop(port), *header);
            }
        } else if self.adaptive {
            let lv = self.level[router as usize];
            for (port, n) in self.neighbours(router) {
                if self.level[n as usize] < lv {
                    emit(hop(port), *header);
                }
            }
        } else {
            emit(hop(self.parent_port[router as usize]), *header);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdg;
    use crate::routing::trace;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64;

    #[test]
    fn ring_of_six_by_hand() {
        // Rooted at 0: levels 0 1 2 3 2 1; router 3's parent is its lowest-port neighbour one
        // level up, 4 (port 1, +x). 2 → 4 climbs to the root 0 (2 is no ancestor of 4) and
        // descends the tree 0, 5, 4.
        let net = Network::ring(6).unwrap();
        let r = GraphUpDown::new(&net, 0, false).unwrap();
        let mut rng = Pcg64::seed_from_u64(0);
        let routers = |s, d, rng: &mut Pcg64| -> Vec<u32> {
            let route = trace(&net, &r, s, d, rng, &[], 12).unwrap();
            route.iter().map(|x| x.0).collect()
        };
        assert_eq!(routers(2, 4, &mut rng), vec![2, 1, 0, 5, 4]);
        // 5 is an ancestor of 3 (through 4): straight down. 1 → 3 detours through the root,
        // 4 hops where 2 would do: up*/down* is not minimal.
        assert_eq!(routers(5, 3, &mut rng), vec![5, 4, 3]);
        assert_eq!(routers(1, 3, &mut rng), vec![1, 0, 5, 4, 3]);
        cdg::check(&net, &r).unwrap();
    }

    #[test]
    fn bad_roots_are_errors() {
        let net = Network::ring(4).unwrap();
        assert!(
            GraphUpDown::new(&net, 4, false)
                .unwrap_err()
                .to_string()
                .contains("root 4")
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// On CCC and random connected graphs: every route arrives within twice the diameter,
        /// and the channel dependencies are acyclic for both up-link policies.
        #[test]
        fn routes_arrive_and_never_deadlock(
            edges in prop::collection::vec((0u8..14, 0u8..14), 12..40),
            (h, k) in (2usize..6, 1u32..4),
            root in 0u32..8,
            adaptive in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let text: String = edges.iter().map(|(a, b)| format!("v{a} v{b}\n")).collect();
            let mut nets = Vec::new();
            if let Ok(g) = crate::edgelist::parse_edge_list(&text) {
                nets.push(Network::from_graph(g).unwrap());
            }
            if let Ok(g) = crate::build::ccc(h.max(k as usize), k) {
                nets.push(Network::from_graph(g).unwrap());
            }
            for net in nets {
                let root = root % net.routers();
                let r = GraphUpDown::new(&net, root, adaptive).unwrap();
                prop_assert!(cdg::check(&net, &r).is_ok());
                let limit = 2 * net.min_route_bound() as usize;
                let mut rng = Pcg64::seed_from_u64(seed);
                for s in 0..net.terminals() {
                    for d in 0..net.terminals() {
                        let route = trace(&net, &r, s, d, &mut rng, &[], limit);
                        prop_assert!(route.is_ok(), "{:?}", route);
                    }
                }
            }
        }
    }
}
