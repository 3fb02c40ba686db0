//! Designing universal lists by local search.
//!
//! Cost of a set of lists = (worst broadcast time over all sources, sum over sources), compared
//! lexicographically; both are computed by simulating every source. The search starts from
//! port order and repeatedly moves one entry of one node's list to another place (seeded
//! choice), keeping the change when the cost does not get worse (sideways moves let it cross
//! plateaus) — a plain stochastic hill climber; the budget is a number of evaluated moves.

use crate::sim::{Tiebreak, simulate};
use crate::ulbm::UniversalLists;
use icn_engine::rng::{Rng, stream};
use icn_topo::Graph;

/// Cost of lists: `(worst, total)` over all sources; unreached nodes cost `u32::MAX`.
pub fn cost(g: &Graph, lists: &UniversalLists, tiebreak: Tiebreak) -> (u32, u64) {
    let mut worst = 0u32;
    let mut total = 0u64;
    let mut proto = lists.clone();
    for s in 0..g.len() {
        let t = simulate(g, s, &mut proto, tiebreak)
            .time()
            .unwrap_or(u32::MAX);
        worst = worst.max(t);
        total += u64::from(t);
    }
    (worst, total)
}

/// What the designer achieved.
#[derive(Clone, Debug)]
pub struct Designed {
    pub lists: UniversalLists,
    /// Cost of the port-order lists the search started from.
    pub initial: (u32, u64),
    pub cost: (u32, u64),
    pub moves_tried: u32,
    pub moves_kept: u32,
}

/// Searches for lists with small worst-case time, trying `moves` moves.
pub fn design_lists(
    g: &Graph,
    adaptive: bool,
    moves: u32,
    seed: u64,
    tiebreak: Tiebreak,
) -> Designed {
    let mut lists = UniversalLists::port_order(g, adaptive);
    let initial = cost(g, &lists, tiebreak);
    let mut best = initial;
    let mut rng = stream(seed, 0xD5);
    let mut kept = 0;
    let movable: Vec<usize> = (0..g.len()).filter(|&v| lists.lists[v].len() > 1).collect();
    if !movable.is_empty() {
        for _ in 0..moves {
            let v = movable[rng.random_range(0..movable.len())];
            let len = lists.lists[v].len();
            let from = rng.random_range(0..len);
            let mut to = rng.random_range(0..len - 1);
            if to >= from {
                to += 1;
            }
            let e = lists.lists[v].remove(from);
            lists.lists[v].insert(to, e);
            let c = cost(g, &lists, tiebreak);
            if c <= best {
                best = c;
                kept += 1;
            } else {
                let e = lists.lists[v].remove(to);
                lists.lists[v].insert(from, e);
            }
        }
    }
    Designed {
        lists,
        initial,
        cost: best,
        moves_tried: moves,
        moves_kept: kept,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_topo::build::{ccc, mesh};

    #[test]
    fn design_never_worsens_and_reports_the_true_cost() {
        let g = ccc(3, 2).unwrap();
        for adaptive in [false, true] {
            let d = design_lists(&g, adaptive, 60, 5, Tiebreak::LowestSender);
            assert!(d.cost <= d.initial);
            assert_eq!(cost(&g, &d.lists, Tiebreak::LowestSender), d.cost);
            // Each list is still a permutation of the node's ports.
            for v in 0..g.len() {
                let mut a: Vec<_> = d.lists.lists[v].clone();
                let mut b: Vec<_> = g.links(v).iter().map(|l| l.port).collect();
                a.sort();
                b.sort();
                assert_eq!(a, b);
            }
        }
    }

    #[test]
    fn design_improves_a_mesh() {
        // Port order E, W, N, S on a 4x4 mesh is poor for sources on the east side.
        let g = mesh(4, 4).unwrap();
        let d = design_lists(&g, true, 150, 1, Tiebreak::LowestSender);
        assert!(d.cost < d.initial, "{:?} vs {:?}", d.cost, d.initial);
    }
}
