//! CLBM, classical lists: every node keeps a separate ordered forwarding list for every
//! source, i.e. one broadcast tree per source with children in sending order.
//!
//! Schemes per source:
//! * [`bfs_scheme`]: the BFS tree (lowest-index parent), children ordered by decreasing
//!   subtree broadcast time — optimal for that tree ([`order_children`]);
//! * [`greedy_scheme`]: seeded randomised greedy matchings (each step, informed nodes pick
//!   distinct uninformed neighbours, preferring those with more uninformed neighbours),
//!   the resulting tree re-ordered optimally; the best of several tries and the BFS scheme;
//! * [`tree_from_schedule`]: the tree of an optimal schedule found by [`crate::optimum`]
//!   (used for small graphs: CLBM can be optimal, at the price of its storage).
//!
//! Storage: a node stores one list entry per child per source.

use crate::sim::{Protocol, Send};
use icn_engine::rng::{Rng, stream};
use icn_topo::paths::bfs;
use icn_topo::{Graph, NodeId, Port};

/// A broadcast tree for one source: `children[v]` in sending order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeScheme {
    pub source: NodeId,
    pub children: Vec<Vec<NodeId>>,
}

impl TreeScheme {
    /// Broadcast time of the tree with its current child order.
    pub fn time(&self) -> u32 {
        fn t(s: &TreeScheme, v: NodeId) -> u32 {
            s.children[v]
                .iter()
                .enumerate()
                .map(|(i, &c)| i as u32 + 1 + t(s, c))
                .max()
                .unwrap_or(0)
        }
        t(self, self.source)
    }

    /// List entries the scheme puts in each node.
    pub fn entries(&self) -> Vec<usize> {
        self.children.iter().map(Vec::len).collect()
    }
}

fn port_to(g: &Graph, u: NodeId, v: NodeId) -> Port {
    g.links(u)
        .iter()
        .find(|l| l.to == v)
        .map_or(Port::Edge(0), |l| l.port)
}

impl Protocol for TreeScheme {
    type Msg = ();
    fn start(&mut self, g: &Graph, s: NodeId) -> Vec<Send<()>> {
        self.children[s]
            .iter()
            .map(|&c| Send {
                port: port_to(g, s, c),
                msg: (),
            })
            .collect()
    }
    fn on_receive(&mut self, g: &Graph, v: NodeId, _: NodeId, _: Port, _: &()) -> Vec<Send<()>> {
        self.children[v]
            .iter()
            .map(|&c| Send {
                port: port_to(g, v, c),
                msg: (),
            })
            .collect()
    }
}

/// Orders every node's children by decreasing subtree broadcast time, which minimises the
/// tree's broadcast time (exchange argument: the child needing longest goes first).
pub fn order_children(source: NodeId, parent: &[Option<NodeId>]) -> TreeScheme {
    let n = parent.len();
    let mut children: Vec<Vec<NodeId>> = vec![Vec::new(); n];
    for (v, p) in parent.iter().enumerate() {
        if let Some(p) = *p {
            children[p].push(v);
        }
    }
    // Post-order over the tree (iterative, deep trees exist: paths).
    let mut order = Vec::with_capacity(n);
    let mut stack = vec![source];
    while let Some(v) = stack.pop() {
        order.push(v);
        stack.extend(children[v].iter().copied());
    }
    let mut time = vec![0u32; n];
    for &v in order.iter().rev() {
        children[v].sort_by_key(|&c| (std::cmp::Reverse(time[c]), c));
        time[v] = children[v]
            .iter()
            .enumerate()
            .map(|(i, &c)| i as u32 + 1 + time[c])
            .max()
            .unwrap_or(0);
    }
    TreeScheme { source, children }
}

/// BFS tree with optimally ordered children.
pub fn bfs_scheme(g: &Graph, source: NodeId) -> TreeScheme {
    let dist = bfs(g, source);
    let parent: Vec<Option<NodeId>> = (0..g.len())
        .map(|v| {
            if v == source {
                None
            } else {
                g.neighbours(v)
                    .into_iter()
                    .filter(|&u| dist[u] + 1 == dist[v])
                    .min()
            }
        })
        .collect();
    order_children(source, &parent)
}

/// One randomised greedy broadcast; returns the parent of every node.
fn greedy_parents(g: &Graph, source: NodeId, rng: &mut impl Rng) -> Vec<Option<NodeId>> {
    let n = g.len();
    let mut informed = vec![false; n];
    let mut parent = vec![None; n];
    informed[source] = true;
    let mut frontier = vec![source];
    let mut count = 1;
    while count < n {
        let mut senders = frontier.clone();
        // Fisher–Yates shuffle so no node is always first to choose.
        for i in (1..senders.len()).rev() {
            let j = rng.random_range(0..=i);
            senders.swap(i, j);
        }
        let mut fresh = Vec::new();
        for &u in &senders {
            let pick = g
                .neighbours(u)
                .into_iter()
                .filter(|&v| !informed[v])
                .max_by_key(|&v| {
                    (
                        g.neighbours(v).iter().filter(|&&w| !informed[w]).count(),
                        rng.random::<u16>(),
                    )
                });
            if let Some(v) = pick {
                informed[v] = true;
                parent[v] = Some(u);
                fresh.push(v);
                count += 1;
            }
        }
        if fresh.is_empty() {
            break; // cannot happen on a connected graph
        }
        frontier.retain(|&u| g.neighbours(u).iter().any(|&v| !informed[v]));
        frontier.extend(fresh);
    }
    parent
}

/// Best of the BFS scheme and `tries` seeded greedy schemes.
pub fn greedy_scheme(g: &Graph, source: NodeId, tries: u32, seed: u64) -> TreeScheme {
    let mut best = bfs_scheme(g, source);
    let mut best_time = best.time();
    let mut rng = stream(seed, source as u64);
    for _ in 0..tries {
        let parent = greedy_parents(g, source, &mut rng);
        if parent
            .iter()
            .enumerate()
            .any(|(v, p)| v != source && p.is_none())
        {
            continue;
        }
        let s = order_children(source, &parent);
        let t = s.time();
        if t < best_time {
            best = s;
            best_time = t;
        }
    }
    best
}

/// The broadcast tree of a schedule: each node's parent is the sender of its first
/// reception (lowest sender on ties), children in order of their send steps, then re-ordered
/// by [`order_children`] (which can only keep or shorten the time).
pub fn tree_from_schedule(
    n: usize,
    source: NodeId,
    schedule: &[crate::sim::Transmission],
) -> TreeScheme {
    let mut parent: Vec<Option<NodeId>> = vec![None; n];
    let mut at = vec![u32::MAX; n];
    at[source] = 0;
    for t in schedule {
        if t.step < at[t.to] || (t.step == at[t.to] && parent[t.to].is_some_and(|p| t.from < p)) {
            at[t.to] = t.step;
            parent[t.to] = Some(t.from);
        }
    }
    parent[source] = None;
    order_children(source, &parent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{Tiebreak, simulate};
    use crate::validate::check_schedule;
    use icn_topo::build::{ccc, hypercube, path};

    #[test]
    fn ordering_children_is_optimal_for_a_star_of_paths() {
        // Source 0 with children 1 (path of 3 more below) and 5 (leaf): 1 first → 1 + 3 = 4.
        let parent = vec![None, Some(0), Some(1), Some(2), Some(3), Some(0)];
        let s = order_children(0, &parent);
        assert_eq!(s.children[0], vec![1, 5]);
        assert_eq!(s.time(), 4);
    }

    #[test]
    fn bfs_scheme_on_path_and_hypercube() {
        let g = path(6).unwrap();
        assert_eq!(bfs_scheme(&g, 0).time(), 5);
        let q = hypercube(4).unwrap();
        let s = bfs_scheme(&q, 0);
        let mut sch = s.clone();
        let o = simulate(&q, 0, &mut sch, Tiebreak::LowestSender);
        check_schedule(&q, 0, &o.schedule, Some(&o.first_receipt)).unwrap();
        assert_eq!(o.time(), Some(s.time()));
        assert_eq!(o.redundant_total(), 0);
        assert_eq!(o.messages(), 15);
    }

    #[test]
    fn optimal_schedule_tree_reaches_the_optimum() {
        let g = ccc(3, 2).unwrap();
        let s = g.node("(0,2)").unwrap();
        let opt = crate::optimum::optimum(&g, s, 64, 100_000, 100);
        let tree = tree_from_schedule(g.len(), s, &opt.schedule);
        assert_eq!(Some(tree.time()), opt.exact);
        assert_eq!(tree.entries().iter().sum::<usize>(), g.len() - 1);
        let o = simulate(&g, s, &mut tree.clone(), Tiebreak::LowestSender);
        check_schedule(&g, s, &o.schedule, Some(&o.first_receipt)).unwrap();
        assert_eq!(o.time(), opt.exact);
    }

    #[test]
    fn greedy_is_never_worse_than_bfs_and_is_reproducible() {
        let g = ccc(4, 3).unwrap();
        for s in [0, 5, 17] {
            let a = greedy_scheme(&g, s, 20, 3);
            assert!(a.time() <= bfs_scheme(&g, s).time());
            assert_eq!(a, greedy_scheme(&g, s, 20, 3));
            assert_eq!(a.entries().iter().sum::<usize>(), g.len() - 1);
        }
    }
}
