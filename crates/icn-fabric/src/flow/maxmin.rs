//! Weighted max-min fair sharing with rate bounds, as SimGrid's `lmm` solver computes it.
//!
//! Each flow `v` has a *penalty* `p_v` (CM02: its route latency; a longer route gets less,
//! as TCP's RTT unfairness does), an optional rate bound `b_v`, and uses each link `c` of
//! its routes with a weight `w_vc` (1 on the route, 0.05 on the reverse route for the
//! acknowledgements, SimGrid's `network/crosstraffic`). Progressive filling: raise a level
//! `λ` for every unfixed flow at once, flow `v` getting `λ / p_v`; the first link to fill
//! (`remaining capacity / Σ w_vc / p_v` smallest) or the first bound reached fixes the flows
//! it holds; repeat with what is left. The result is the unique weighted max-min allocation:
//! no flow can get more without taking from one that has no more than it (weighted).

use std::borrow::Borrow;

/// One flow as the solver sees it.
#[derive(Clone, Debug)]
pub struct FlowUse {
    /// `(link, weight)` pairs; a link may appear twice (its weights add).
    pub links: Vec<(usize, f64)>,
    pub penalty: f64,
    /// Largest rate in bytes/s (`f64::INFINITY`: none).
    pub bound: f64,
}

/// Solves for every flow's rate (bytes/s) given each link's capacity (bytes/s).
/// `scratch` is reused between calls (one slot per link). The flows may be given by value
/// or by reference (a caller solving a subset of its flows need not copy them).
pub fn solve<U: Borrow<FlowUse>>(flows: &[U], capacity: &[f64], scratch: &mut Scratch) -> Vec<f64> {
    let n = flows.len();
    let mut rate = vec![0.0; n];
    let mut fixed = vec![false; n];
    scratch.remaining.clear();
    scratch.remaining.extend_from_slice(capacity);
    scratch.usage.clear();
    scratch.usage.resize(capacity.len(), 0.0);
    let mut left = n;
    while left > 0 {
        for u in scratch.usage.iter_mut() {
            *u = 0.0;
        }
        for (v, f) in flows.iter().map(Borrow::borrow).enumerate() {
            if !fixed[v] {
                for &(c, w) in &f.links {
                    scratch.usage[c] += w / f.penalty;
                }
            }
        }
        let mut level = f64::INFINITY;
        for (c, &u) in scratch.usage.iter().enumerate() {
            if u > 0.0 {
                level = level.min(scratch.remaining[c].max(0.0) / u);
            }
        }
        for (v, f) in flows.iter().map(Borrow::borrow).enumerate() {
            if !fixed[v] {
                level = level.min(f.bound * f.penalty);
            }
        }
        if !level.is_finite() {
            // Flows on no link and without a bound: infinitely fast.
            for v in 0..n {
                if !fixed[v] {
                    rate[v] = f64::INFINITY;
                    fixed[v] = true;
                }
            }
            break;
        }
        // Fix the flows of every link that is full at this level, and every flow at its bound.
        let tight = |x: f64| x <= level * (1.0 + 1e-12);
        let mut fix = Vec::new();
        for (v, f) in flows.iter().map(Borrow::borrow).enumerate() {
            if fixed[v] {
                continue;
            }
            let on_full = f.links.iter().any(|&(c, _)| {
                scratch.usage[c] > 0.0 && tight(scratch.remaining[c].max(0.0) / scratch.usage[c])
            });
            if on_full || tight(f.bound * f.penalty) {
                fix.push(v);
            }
        }
        for v in fix {
            let f: &FlowUse = flows[v].borrow();
            rate[v] = (level / f.penalty).min(f.bound);
            fixed[v] = true;
            left -= 1;
            for &(c, w) in &f.links {
                scratch.remaining[c] -= w * rate[v];
            }
        }
    }
    rate
}

/// Buffers [`solve`] reuses.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    remaining: Vec<f64>,
    usage: Vec<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(links: &[usize]) -> FlowUse {
        FlowUse {
            links: links.iter().map(|&c| (c, 1.0)).collect(),
            penalty: 1.0,
            bound: f64::INFINITY,
        }
    }

    fn rates(flows: &[FlowUse], cap: &[f64]) -> Vec<f64> {
        solve(flows, cap, &mut Scratch::default())
    }

    /// The textbook case: links A (cap 1) and B (cap 2); flow 0 on A and B, flow 1 on A,
    /// flow 2 on B. A is the bottleneck: flows 0 and 1 get 1/2 each; flow 2 gets 2 − 1/2.
    #[test]
    fn the_textbook_example() {
        let r = rates(&[flow(&[0, 1]), flow(&[0]), flow(&[1])], &[1.0, 2.0]);
        assert_eq!(r, vec![0.5, 0.5, 1.5]);
    }

    /// n flows on one link share it equally; a bound frees capacity for the others.
    #[test]
    fn equal_shares_and_bounds() {
        let r = rates(&[flow(&[0]), flow(&[0]), flow(&[0]), flow(&[0])], &[100.0]);
        assert_eq!(r, vec![25.0; 4]);
        let mut b = flow(&[0]);
        b.bound = 10.0;
        let r = rates(&[b, flow(&[0]), flow(&[0])], &[100.0]);
        assert_eq!(r, vec![10.0, 45.0, 45.0]);
    }

    /// Penalties weight the shares: penalty 1 and 3 on one link of 100 get 75 and 25.
    #[test]
    fn penalties_weight_the_shares() {
        let mut slow = flow(&[0]);
        slow.penalty = 3.0;
        let r = rates(&[flow(&[0]), slow], &[100.0]);
        assert!(
            (r[0] - 75.0).abs() < 1e-9 && (r[1] - 25.0).abs() < 1e-9,
            "{r:?}"
        );
    }

    /// Cross-traffic: A→B (up A, down B) and B→A (up B, down A) each load the other's
    /// links at 5 %: each gets 125 / 1.05.
    #[test]
    fn crosstraffic_takes_five_percent() {
        let (up_a, down_a, up_b, down_b) = (0, 1, 2, 3);
        let ab = FlowUse {
            links: vec![(up_a, 1.0), (down_b, 1.0), (up_b, 0.05), (down_a, 0.05)],
            penalty: 1.0,
            bound: f64::INFINITY,
        };
        let ba = FlowUse {
            links: vec![(up_b, 1.0), (down_a, 1.0), (up_a, 0.05), (down_b, 0.05)],
            penalty: 1.0,
            bound: f64::INFINITY,
        };
        let r = rates(&[ab, ba], &[125.0; 4]);
        for x in r {
            assert!((x - 125.0 / 1.05).abs() < 1e-9, "{x}");
        }
    }

    proptest::proptest! {
        /// No link is over its capacity, and every flow has a full link (or its bound):
        /// the max-min conditions.
        #[test]
        fn feasible_and_every_flow_is_bottlenecked(
            routes in proptest::collection::vec(proptest::collection::vec(0usize..5, 1..4), 1..12),
            caps in proptest::collection::vec(1.0f64..100.0, 5),
        ) {
            let flows: Vec<FlowUse> = routes.iter().map(|r| flow(r)).collect();
            let r = rates(&flows, &caps);
            let mut load = [0.0; 5];
            for (f, x) in flows.iter().zip(&r) {
                for &(c, w) in &f.links { load[c] += w * x; }
            }
            for c in 0..5 { proptest::prop_assert!(load[c] <= caps[c] * (1.0 + 1e-9)); }
            for (v, f) in flows.iter().enumerate() {
                // Some link of v is full and v's rate is the largest on it.
                let ok = f.links.iter().any(|&(c, _)| {
                    load[c] >= caps[c] * (1.0 - 1e-9)
                        && flows.iter().zip(&r).filter(|(g, _)| g.links.iter().any(|l| l.0 == c))
                            .all(|(_, y)| *y <= r[v] * (1.0 + 1e-9))
                });
                proptest::prop_assert!(ok, "flow {} at {} is not bottlenecked", v, r[v]);
            }
        }
    }
}
