//! Spec check: with uniform destinations and infinite input queues the ring cannot exceed
//! 2/(Ls+Le+2) transactions per cycle, and should approach it at saturation.

mod common;

use icn_sci::config::{BandwidthAllocation, Pattern};

/// Ls = 40 (64-byte send), Le = 4: 2/46 ≈ 0.0435 transactions per cycle, whatever N.
const BOUND: f64 = 2.0 / 46.0;

#[test]
fn saturated_uniform_throughput_approaches_the_bound() {
    for (nodes, bw) in [4, 8, 16].into_iter().flat_map(|n| {
        [
            (n, BandwidthAllocation::Sat),
            (n, BandwidthAllocation::None),
        ]
    }) {
        let mut cfg = common::short(nodes, 1.0, Pattern::Uniform);
        cfg.unbounded_queue = true;
        cfg.bandwidth_allocation = bw;
        cfg.measure_cycles = 30_000;
        let sim = common::run(&cfg, 11, false);
        let m = sim.measure().metrics("", sim.now());
        let tpc = m.value("transactions_per_cycle");
        println!(
            "N = {nodes}: {tpc:.5} transactions/cycle = {:.1} % of the bound, {:.3} GB/s",
            100.0 * tpc / BOUND,
            m.value("throughput_gbps")
        );
        // The bound is on the long-run mean; allow 1 % for the window's random hop distances.
        assert!(
            tpc <= BOUND * 1.01,
            "N = {nodes}: {tpc} exceeds the bound {BOUND}"
        );
        assert!(
            tpc >= 0.85 * BOUND,
            "N = {nodes}: {tpc} is below 85 % of the bound {BOUND}"
        );
    }
}
