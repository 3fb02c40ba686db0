//! Exact minimum broadcast time from one source, by SAT (the pure-Rust solver `batsat`).
//!
//! "Can `source` inform every node within `T` steps?" is encoded with
//!
//! | variable | meaning |
//! |----------|---------|
//! | `x[v][t]`, `0 ≤ t ≤ T` | node `v` holds the message after step `t` |
//! | `s[u→v][t]`, `1 ≤ t ≤ T` | `u` sends to its neighbour `v` in step `t` |
//!
//! | clause | rule of the model |
//! |--------|-------------------|
//! | `x[source][0]`, `¬x[v][0]` otherwise | only the source starts informed |
//! | `s[u→v][t] → x[u][t−1]` | a node sends only what it holds |
//! | `¬s[u→v][t] ∨ ¬s[u→w][t]` | one send per node per step |
//! | `x[v][t] → x[v][t−1] ∨ ⋁_u s[u→v][t]` | a node is informed only by a send |
//! | `x[v][t−1] → x[v][t]`, `s[u→v][t] → ¬x[v][t−1]` | monotone; no sends to informed nodes (never needed, prunes) |
//! | `¬x[v][t]` for `t < dist(source, v)` | distance (implied, prunes) |
//! | `x[v][T]` | everyone is informed |
//!
//! `T` runs upward from a lower bound until satisfiable; each solver call has a conflict
//! budget, and when it runs out the answer is an interval, not a guess.

use crate::bounds::lower_bound;
use crate::sim::Transmission;
use batsat::{Callbacks, ClauseKind, Lit, Solver, SolverInterface, SolverOpts, lbool};
use icn_topo::paths::bfs;
use icn_topo::{Graph, NodeId, Port};

/// What the search established about the minimum broadcast time from one source.
#[derive(Clone, Debug, PartialEq)]
pub struct Optimum {
    /// Every `T` below this was proved impossible (or is below a proven bound).
    pub lower: u32,
    /// The optimum, when the search decided it.
    pub exact: Option<u32>,
    /// An optimal schedule when `exact` is known.
    pub schedule: Vec<Transmission>,
}

/// Stops the solver after `limit` conflicts (deterministic, unlike a time limit).
struct Budget {
    conflicts: u64,
    limit: u64,
}

impl Callbacks for Budget {
    fn on_new_clause(&mut self, _c: &[Lit], src: ClauseKind) {
        if src == ClauseKind::Learnt {
            self.conflicts += 1;
        }
    }
    fn stop(&self) -> bool {
        self.conflicts >= self.limit
    }
}

/// Answer of one bounded SAT call.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// Feasible, with a witness schedule.
    Yes(Vec<Transmission>),
    /// Proved infeasible.
    No,
    /// The conflict budget ran out.
    Unknown,
}

/// Decides whether `source` can inform all nodes within `t_max` steps and, in addition, each
/// `(node, step)` of `deadlines` by that step (used to test per-node claims such as Lemma 1
/// against optimal schedules).
pub fn decide(
    g: &Graph,
    source: NodeId,
    t_max: u32,
    deadlines: &[(NodeId, u32)],
    conflicts: u64,
) -> Answer {
    decide_restricted(g, source, t_max, deadlines, &[], conflicts)
}

/// [`decide`] with groups of directed links of which each schedule may use at most one, once
/// (e.g. all L links into one CCC cycle: "every cycle is entered once").
// Indices name nodes and steps in the encoding; iterators would hide that.
#[allow(clippy::needless_range_loop)]
pub fn decide_restricted(
    g: &Graph,
    source: NodeId,
    t_max: u32,
    deadlines: &[(NodeId, u32)],
    at_most_once: &[Vec<(NodeId, NodeId)>],
    conflicts: u64,
) -> Answer {
    let n = g.len();
    let tt = t_max as usize;
    let dist = bfs(g, source);
    if dist.iter().any(|&d| d > t_max) || deadlines.iter().any(|&(v, d)| dist[v] > d) {
        return Answer::No;
    }
    let mut solver = Solver::new(
        SolverOpts::default(),
        Budget {
            conflicts: 0,
            limit: conflicts,
        },
    );
    let lit = |s: &mut Solver<Budget>| Lit::new(s.new_var_default(), true);
    // x[v][t]
    let x: Vec<Vec<Lit>> = (0..n)
        .map(|_| (0..=tt).map(|_| lit(&mut solver)).collect())
        .collect();
    let nbrs: Vec<Vec<NodeId>> = (0..n).map(|v| g.neighbours(v)).collect();
    // s[u][j][t]: u sends to nbrs[u][j] in step t (index t-1).
    let snd: Vec<Vec<Vec<Lit>>> = (0..n)
        .map(|u| {
            (0..nbrs[u].len())
                .map(|_| (0..tt).map(|_| lit(&mut solver)).collect())
                .collect()
        })
        .collect();
    let add = |s: &mut Solver<Budget>, mut c: Vec<Lit>| {
        s.add_clause_reuse(&mut c);
    };
    for v in 0..n {
        add(
            &mut solver,
            vec![if v == source { x[v][0] } else { !x[v][0] }],
        );
        add(&mut solver, vec![x[v][tt]]);
        for &(w, d) in deadlines {
            if w == v && (d as usize) < tt {
                add(&mut solver, vec![x[v][d as usize]]);
            }
        }
        for t in 0..=tt {
            if (t as u32) < dist[v] {
                add(&mut solver, vec![!x[v][t]]);
            }
        }
    }
    for t in 1..=tt {
        for v in 0..n {
            add(&mut solver, vec![!x[v][t - 1], x[v][t]]);
            let mut why = vec![!x[v][t], x[v][t - 1]];
            for u in 0..n {
                if let Some(j) = nbrs[u].iter().position(|&w| w == v) {
                    why.push(snd[u][j][t - 1]);
                }
            }
            add(&mut solver, why);
        }
        for u in 0..n {
            for (j, &v) in nbrs[u].iter().enumerate() {
                let s = snd[u][j][t - 1];
                add(&mut solver, vec![!s, x[u][t - 1]]);
                add(&mut solver, vec![!s, !x[v][t - 1]]);
                for j2 in j + 1..nbrs[u].len() {
                    add(&mut solver, vec![!s, !snd[u][j2][t - 1]]);
                }
            }
        }
    }
    for group in at_most_once {
        let mut uses: Vec<Lit> = Vec::new();
        for &(u, v) in group {
            if let Some(j) = nbrs[u].iter().position(|&w| w == v) {
                uses.extend(snd[u][j].iter().copied());
            }
        }
        for a in 0..uses.len() {
            for b in a + 1..uses.len() {
                add(&mut solver, vec![!uses[a], !uses[b]]);
            }
        }
    }
    let r = solver.solve_limited(&[]);
    if r == lbool::TRUE {
        let mut schedule = Vec::new();
        for t in 1..=tt {
            for u in 0..n {
                for (j, &v) in nbrs[u].iter().enumerate() {
                    if solver.value_lit(snd[u][j][t - 1]) == lbool::TRUE {
                        let port = g
                            .links(u)
                            .iter()
                            .find(|l| l.to == v)
                            .map_or(Port::Edge(0), |l| l.port);
                        schedule.push(Transmission {
                            step: t as u32,
                            from: u,
                            to: v,
                            port,
                        });
                    }
                }
            }
        }
        Answer::Yes(schedule)
    } else if r == lbool::FALSE {
        Answer::No
    } else {
        Answer::Unknown
    }
}

/// Default conflict budget per solver call.
pub const DEFAULT_CONFLICTS: u64 = 200_000;

/// Minimum broadcast time from `source`, searching `T = lower bound, lower bound + 1, …` up
/// to `upper` (a time known to be achievable, e.g. from a heuristic; the search stops there).
/// Graphs above `max_nodes` are not searched (the answer is the lower bound only).
pub fn optimum(g: &Graph, source: NodeId, upper: u32, conflicts: u64, max_nodes: usize) -> Optimum {
    let mut lower = lower_bound(g, source);
    if g.len() > max_nodes {
        return Optimum {
            lower,
            exact: None,
            schedule: Vec::new(),
        };
    }
    while lower <= upper {
        match decide(g, source, lower, &[], conflicts) {
            Answer::Yes(schedule) => {
                return Optimum {
                    lower,
                    exact: Some(lower),
                    schedule,
                };
            }
            Answer::No => lower += 1,
            Answer::Unknown => break,
        }
    }
    Optimum {
        lower,
        exact: None,
        schedule: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::check_schedule;
    use icn_topo::build::{ccc, hypercube, path, ring};

    fn exact(g: &Graph, s: NodeId) -> u32 {
        let o = optimum(g, s, 64, DEFAULT_CONFLICTS, 200);
        let rep = check_schedule(g, s, &o.schedule, None).unwrap();
        assert!(rep.iter().all(|t| t.is_some_and(|t| Some(t) <= o.exact)));
        o.exact.unwrap()
    }

    #[test]
    fn path_from_an_end_needs_n_minus_1() {
        for n in 2..=9 {
            assert_eq!(exact(&path(n).unwrap(), 0), n as u32 - 1);
        }
        // From the middle of a path of 7: 3 one way, then the other side needs 1 + 3 = 4.
        assert_eq!(exact(&path(7).unwrap(), 3), 4);
    }

    #[test]
    fn hypercube_needs_d() {
        for d in 1..=5 {
            assert_eq!(exact(&hypercube(d).unwrap(), 0), d);
        }
    }

    #[test]
    fn ring_needs_ceil_half() {
        for n in 3..=10 {
            assert_eq!(exact(&ring(n).unwrap(), 0), n.div_ceil(2) as u32);
        }
    }

    #[test]
    fn ccc_2_2_and_budget_exhaustion() {
        let g = ccc(3, 2).unwrap();
        let o = exact(&g, 2);
        assert!(o >= 4);
        // A zero budget decides nothing beyond the lower bound (unless it is trivially No).
        let z = optimum(&g, 2, 64, 0, 200);
        assert!(z.exact.is_none() || z.exact == Some(o));
        // Too many nodes: lower bound only.
        let big = optimum(&g, 2, 64, DEFAULT_CONFLICTS, 4);
        assert_eq!(big.exact, None);
    }
}
