//! Breadth-first search: distances, eccentricity, diameter, shortest paths.

use crate::graph::{Graph, NodeId};
use std::collections::VecDeque;

impl Graph {
    /// Hop distance from `src` to every node (`None` where unreachable; never for a built graph).
    pub fn distances(&self, src: NodeId) -> Vec<Option<u32>> {
        let mut dist = vec![None; self.len()];
        let mut queue = VecDeque::from([src]);
        dist[src] = Some(0);
        while let Some(u) = queue.pop_front() {
            let du = dist[u].unwrap_or(0);
            for l in self.links(u) {
                if dist[l.to].is_none() {
                    dist[l.to] = Some(du + 1);
                    queue.push_back(l.to);
                }
            }
        }
        dist
    }
}

/// Distances from `src` as plain numbers (graphs are connected by construction).
pub fn bfs(g: &Graph, src: NodeId) -> Vec<u32> {
    g.distances(src)
        .into_iter()
        .map(|d| d.unwrap_or(u32::MAX))
        .collect()
}

/// Largest distance from `v`: a lower bound on any broadcast from `v`.
pub fn eccentricity(g: &Graph, v: NodeId) -> u32 {
    bfs(g, v).into_iter().max().unwrap_or(0)
}

/// Largest eccentricity.
pub fn diameter(g: &Graph) -> u32 {
    (0..g.len()).map(|v| eccentricity(g, v)).max().unwrap_or(0)
}

/// One shortest path from `a` to `b`, both ends included (the lowest-numbered parent is taken
/// at each BFS layer, so the answer is deterministic).
pub fn shortest_path(g: &Graph, a: NodeId, b: NodeId) -> Vec<NodeId> {
    let dist = bfs(g, b);
    let mut path = vec![a];
    let mut v = a;
    while v != b {
        let next = g
            .links(v)
            .iter()
            .map(|l| l.to)
            .filter(|&u| dist[u] + 1 == dist[v])
            .min();
        match next {
            Some(u) => {
                path.push(u);
                v = u;
            }
            None => break,
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{ccc, hypercube, mesh};

    #[test]
    fn shortest_path_in_mesh_has_manhattan_length() {
        let g = mesh(5, 4).unwrap();
        let a = g.node("(0,0)").unwrap();
        let b = g.node("(4,3)").unwrap();
        let p = shortest_path(&g, a, b);
        assert_eq!(p.len(), 8);
        assert!(p.windows(2).all(|w| g.adjacent(w[0], w[1])));
        assert_eq!((p[0], p[7]), (a, b));
    }

    #[test]
    fn hypercube_distance_is_hamming() {
        let g = hypercube(5).unwrap();
        let d = bfs(&g, 0b10110);
        for (v, &dv) in d.iter().enumerate() {
            assert_eq!(dv, (v ^ 0b10110).count_ones());
        }
    }

    #[test]
    fn ccc_eccentricities_are_symmetric_in_c() {
        // Flipping cycle bits is an automorphism, so eccentricity depends on p only.
        let g = ccc(5, 3).unwrap();
        for p in 0..5 {
            let e0 = eccentricity(&g, g.ccc_node(0, p).unwrap());
            for c in 1..8 {
                assert_eq!(eccentricity(&g, g.ccc_node(c, p).unwrap()), e0);
            }
        }
    }
}
