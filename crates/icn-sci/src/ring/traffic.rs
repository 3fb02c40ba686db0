//! Traffic generators: when each node creates a send, to whom, and how large.
//!
//! * Arrivals are a Bernoulli process per node and cycle with probability
//!   `p = load / E[send symbols]`, so that a node offers `load` × its link bandwidth in send
//!   symbols (header and CRC included). It is drawn as geometric inter-arrival gaps (one draw
//!   per send, identical in distribution to one coin per cycle).
//! * Each node draws from its own stream `rng::stream(seed, node)`: arrivals are a pure
//!   function of (config, seed) and do not depend on what the ring does with them, which is
//!   what lets `transmitter = "compare"` feed both transmitters identical traffic.
//! * Destinations: `uniform` (any other node), `hotspot` (with probability f the hot node,
//!   else uniform over the other nodes; the hot node itself sends uniformly), `neighbor_x`
//!   (also read as `neighbour`) and `neighbor` (the downstream neighbour), `trace` (from a CSV
//!   file).

use crate::config::{SciConfig, TrafficPattern};
use crate::ring::trace::Trace;
use icn_engine::rng::{Rng, SimRng, stream};

/// One generated send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub src: u8,
    pub dst: u8,
    pub size_class: u8,
}

/// The traffic of one run.
pub struct Traffic {
    pattern: TrafficPattern,
    nodes: usize,
    hot: usize,
    hot_fraction: f64,
    /// ln(1 − p) for the geometric gaps.
    ln_q: f64,
    /// Cumulative size-class weights, normalised to end at 1.
    size_cdf: Vec<f64>,
    rngs: Vec<SimRng>,
    next: Vec<u64>,
    /// Earliest of `next` (skips the per-node check on most cycles).
    next_any: u64,
    trace: Trace,
    cursor: usize,
    /// Switched systems: where "other node" draws go (see [`Traffic::with_local_mix`]).
    mix: Option<LocalMix>,
}

/// A local-vs-remote destination mix over groups of nodes (the rings of a switched system).
struct LocalMix {
    fraction: f64,
    group_of: Vec<usize>,
    groups: Vec<Vec<u8>>,
}

impl Traffic {
    pub fn new(cfg: &SciConfig, seed: u64, trace: Trace) -> Self {
        let total: f64 = cfg.data_weights.iter().sum();
        let mut acc = 0.0;
        let size_cdf: Vec<f64> = cfg
            .data_weights
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        let mean_len: f64 = cfg
            .send_lengths()
            .iter()
            .zip(&cfg.data_weights)
            .map(|(&l, w)| l as f64 * w / total)
            .sum();
        let p = (cfg.load / mean_len).min(1.0);
        let mut t = Traffic {
            pattern: cfg.traffic.pattern,
            nodes: cfg.nodes,
            hot: cfg.traffic.hotspot_node,
            hot_fraction: cfg.traffic.hotspot_fraction,
            // ln(1 − p) from ln_1p: `(1.0 - p).ln()` is 0 for p < 1.1e-16 (1 − p rounds to
            // 1), which made every gap 1 — the *highest* load for the lowest.
            ln_q: (-p).ln_1p(),
            size_cdf,
            rngs: (0..cfg.nodes as u64).map(|i| stream(seed, i)).collect(),
            next: vec![u64::MAX; cfg.nodes],
            next_any: u64::MAX,
            trace,
            cursor: 0,
            mix: None,
        };
        if t.pattern != TrafficPattern::Trace {
            for i in 0..t.nodes {
                t.next[i] = t.gap(i) - 1;
            }
            if t.pattern == TrafficPattern::Hotspot && !cfg.traffic.hot_node_sends {
                t.next[t.hot] = u64::MAX;
            }
            t.next_any = t.next.iter().copied().min().unwrap_or(u64::MAX);
        }
        t
    }

    /// Geometric gap ≥ 1 (cycles to the next arrival).
    fn gap(&mut self, node: usize) -> u64 {
        if self.ln_q == f64::NEG_INFINITY {
            return 1;
        }
        let u: f64 = self.rngs[node].random();
        // Saturating: at tiny loads the gap exceeds u64 (`as` saturates to u64::MAX, never).
        ((((1.0 - u).ln() / self.ln_q).floor()) as u64).saturating_add(1)
    }

    /// Replaces "uniform over the other nodes" (uniform traffic, and the non-hot share of
    /// hot-spot traffic) by: with probability `fraction` a node of the source's own group,
    /// else a node of another group, uniformly within that set. A set that is empty (a group
    /// of one; a single group) falls back to the other one.
    pub fn with_local_mix(mut self, fraction: f64, group_of: Vec<usize>) -> Self {
        let n_groups = group_of.iter().max().map_or(0, |g| g + 1);
        let mut groups = vec![Vec::new(); n_groups];
        for (node, &g) in group_of.iter().enumerate() {
            groups[g].push(node as u8);
        }
        self.mix = Some(LocalMix {
            fraction,
            group_of,
            groups,
        });
        self
    }

    /// Node `node` generates nothing (switched systems: silence a whole ring).
    pub fn silence(&mut self, node: usize) {
        if let Some(n) = self.next.get_mut(node) {
            *n = u64::MAX;
        }
        self.next_any = self.next.iter().copied().min().unwrap_or(u64::MAX);
    }

    fn uniform_other(&mut self, src: usize) -> usize {
        if self.mix.is_some() {
            return self.mixed_other(src);
        }
        let r = self.rngs[src].random_range(0..self.nodes - 1);
        if r >= src { r + 1 } else { r }
    }

    fn mixed_other(&mut self, src: usize) -> usize {
        let Some(mix) = &self.mix else {
            return src;
        };
        let rng = &mut self.rngs[src];
        let own = &mix.groups[mix.group_of[src]];
        let local_possible = own.len() > 1;
        let remote_possible = own.len() < self.nodes;
        let local = if local_possible && remote_possible {
            rng.random::<f64>() < mix.fraction
        } else {
            local_possible
        };
        if local {
            // Uniform over the group minus the source.
            let k = rng.random_range(0..own.len() - 1);
            let pick = own[k];
            if usize::from(pick) == src {
                usize::from(own[own.len() - 1])
            } else {
                usize::from(pick)
            }
        } else {
            let k = rng.random_range(0..self.nodes - own.len());
            // The k-th node outside the source's group.
            (0..self.nodes)
                .filter(|&n| mix.group_of[n] != mix.group_of[src])
                .nth(k)
                .unwrap_or(src)
        }
    }

    fn draw(&mut self, src: usize) -> Arrival {
        let dst = match self.pattern {
            TrafficPattern::NeighborX | TrafficPattern::Neighbor => (src + 1) % self.nodes,
            TrafficPattern::Hotspot if src != self.hot => {
                if self.rngs[src].random::<f64>() < self.hot_fraction {
                    self.hot
                } else {
                    self.uniform_other(src)
                }
            }
            _ => self.uniform_other(src),
        };
        let size_class = if self.size_cdf.len() == 1 {
            0
        } else {
            let u: f64 = self.rngs[src].random();
            self.size_cdf
                .iter()
                .position(|&c| u < c)
                .unwrap_or(self.size_cdf.len() - 1)
        };
        Arrival {
            src: src as u8,
            dst: dst as u8,
            size_class: size_class as u8,
        }
    }

    /// Calls `emit` for every send created at cycle `now` (cycles must be visited in order).
    #[inline]
    pub fn arrivals(&mut self, now: u64, mut emit: impl FnMut(Arrival)) {
        if self.pattern == TrafficPattern::Trace {
            while let Some(e) = self.trace.entries.get(self.cursor) {
                if e.cycle > now {
                    break;
                }
                self.cursor += 1;
                if e.cycle == now {
                    emit(Arrival {
                        src: e.src,
                        dst: e.dst,
                        size_class: e.size_class,
                    });
                }
            }
            return;
        }
        if now < self.next_any {
            return;
        }
        let mut next_any = u64::MAX;
        for i in 0..self.nodes {
            if self.next[i] == now {
                emit(self.draw(i));
                self.next[i] = now.saturating_add(self.gap(i));
            }
            next_any = next_any.min(self.next[i]);
        }
        self.next_any = next_any;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TrafficConfig;

    fn cfg(pattern: TrafficPattern, load: f64) -> SciConfig {
        SciConfig {
            nodes: 5,
            load,
            traffic: TrafficConfig {
                pattern,
                hotspot_node: 2,
                hotspot_fraction: 0.5,
                hot_node_sends: true,
                trace_file: None,
            },
            ..SciConfig::default()
        }
    }

    fn collect(c: &SciConfig, cycles: u64) -> Vec<(u64, Arrival)> {
        let mut t = Traffic::new(c, 7, Trace::default());
        let mut out = Vec::new();
        for now in 0..cycles {
            t.arrivals(now, |a| out.push((now, a)));
        }
        out
    }

    #[test]
    fn offered_symbols_match_load() {
        // 40-symbol sends at load 0.4: p = 0.01 per node and cycle.
        let arrivals = collect(&cfg(TrafficPattern::Uniform, 0.4), 200_000);
        let per_node_cycle = arrivals.len() as f64 / (5.0 * 200_000.0);
        assert!((per_node_cycle - 0.01).abs() < 0.0005, "{per_node_cycle}");
        assert!(arrivals.iter().all(|(_, a)| a.src != a.dst && a.dst < 5));
    }

    #[test]
    fn hotspot_and_neighbour_destinations() {
        let arrivals = collect(&cfg(TrafficPattern::Hotspot, 1.0), 100_000);
        let from_cold: Vec<_> = arrivals.iter().filter(|(_, a)| a.src != 2).collect();
        let hot = from_cold.iter().filter(|(_, a)| a.dst == 2).count() as f64;
        // P(hot) = f + (1 − f)/(N − 1) = 0.5 + 0.5/4 = 0.625.
        let share = hot / from_cold.len() as f64;
        assert!((share - 0.625).abs() < 0.02, "{share}");
        assert!(
            arrivals
                .iter()
                .filter(|(_, a)| a.src == 2)
                .all(|(_, a)| a.dst != 2)
        );
        let nb = collect(&cfg(TrafficPattern::NeighborX, 0.5), 10_000);
        assert!(
            nb.iter()
                .all(|(_, a)| usize::from(a.dst) == (usize::from(a.src) + 1) % 5)
        );
    }

    #[test]
    fn a_silent_hot_node_generates_nothing() {
        let mut c = cfg(TrafficPattern::Hotspot, 0.8);
        c.traffic.hot_node_sends = false;
        let arrivals = collect(&c, 50_000);
        assert!(arrivals.iter().all(|(_, a)| a.src != 2));
        assert!(
            (0..5)
                .filter(|&s| s != 2)
                .all(|s| arrivals.iter().any(|(_, a)| a.src == s))
        );
    }

    #[test]
    fn size_mix_follows_weights() {
        let mut c = cfg(TrafficPattern::Uniform, 0.5);
        c.data_bytes = vec![0, 256];
        c.data_weights = vec![3.0, 1.0];
        let arrivals = collect(&c, 100_000);
        let big = arrivals.iter().filter(|(_, a)| a.size_class == 1).count() as f64;
        assert!((big / arrivals.len() as f64 - 0.25).abs() < 0.02);
    }

    #[test]
    fn local_mix_splits_own_group_and_the_rest() {
        // Groups {0, 1} and {2, 3, 4}; 70 % of sends stay in the source's group.
        let c = cfg(TrafficPattern::Uniform, 1.0);
        let mut t = Traffic::new(&c, 3, Trace::default()).with_local_mix(0.7, vec![0, 0, 1, 1, 1]);
        let group = |n: u8| usize::from(n >= 2);
        let (mut local, mut all) = (0.0f64, 0.0f64);
        let mut from_2 = [0u32; 5];
        for now in 0..100_000 {
            t.arrivals(now, |a| {
                assert_ne!(a.src, a.dst);
                all += 1.0;
                if group(a.src) == group(a.dst) {
                    local += 1.0;
                }
                if a.src == 2 {
                    from_2[usize::from(a.dst)] += 1;
                }
            });
        }
        assert!((local / all - 0.7).abs() < 0.01, "{}", local / all);
        // From node 2: its group's others (3, 4) share 70 %, the others (0, 1) 30 %, evenly.
        let n = f64::from(from_2.iter().sum::<u32>());
        for (dst, want) in [(0, 0.15), (1, 0.15), (3, 0.35), (4, 0.35)] {
            let got = f64::from(from_2[dst]) / n;
            assert!((got - want).abs() < 0.02, "dst {dst}: {got}");
        }
    }

    #[test]
    fn same_seed_same_arrivals() {
        let c = cfg(TrafficPattern::Hotspot, 0.7);
        assert_eq!(collect(&c, 5_000), collect(&c, 5_000));
    }

    #[test]
    fn trace_arrivals_replay_in_order() {
        let trace = Trace::parse(
            "t",
            "cycle,src,dst,bytes\n3,0,1,64\n3,4,0,64\n9,2,3,64\n",
            5,
            &[64],
        )
        .unwrap();
        let mut t = Traffic::new(&cfg(TrafficPattern::Trace, 0.5), 1, trace);
        let mut got = Vec::new();
        for now in 0..20 {
            t.arrivals(now, |a| got.push((now, a.src, a.dst)));
        }
        assert_eq!(got, vec![(3, 0, 1), (3, 4, 0), (9, 2, 3)]);
    }
}
