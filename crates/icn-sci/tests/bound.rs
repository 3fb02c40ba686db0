//! Spec check: with uniform destinations and infinite input queues the ring cannot exceed
//! 2/(Ls+Le+2) transactions per cycle, and should approach it at saturation.

mod common;

use icn_sci::config::{BandwidthAllocation, TrafficPattern};
use icn_sci::protocol::packet::send_symbols;

/// 2/(Ls + Le + 2) with Le = 4 (echo) and one idle after each packet.
fn bound(data_bytes: u16) -> f64 {
    2.0 / (send_symbols(data_bytes, false) as f64 + 4.0 + 2.0)
}

/// Transactions per cycle of a saturated uniform ring with unbounded input queues.
fn saturated(nodes: usize, data_bytes: u16, bw: BandwidthAllocation) -> f64 {
    let mut cfg = common::short(nodes, 1.0, TrafficPattern::Uniform);
    cfg.unbounded_queue = true;
    cfg.bandwidth_allocation = bw;
    cfg.data_bytes = vec![data_bytes];
    cfg.measure_cycles = 30_000;
    let sim = common::run(&cfg, 11, false);
    let tpc = sim
        .measure()
        .metrics("", sim.now())
        .require("transactions_per_cycle")
        .unwrap();
    let share = tpc / bound(data_bytes);
    println!(
        "N = {nodes:>2}, {data_bytes:>3} B, {bw:?}: {tpc:.5} transactions/cycle = {:.1} % of the bound",
        100.0 * share
    );
    share
}

/// 64-byte sends (Ls = 40): 2/46 ≈ 0.0435 transactions per cycle ≈ 1.39 GB/s, whatever N.
#[test]
fn saturated_uniform_throughput_approaches_the_bound() {
    for nodes in [4, 8, 16] {
        for bw in [BandwidthAllocation::Sat, BandwidthAllocation::None] {
            let share = saturated(nodes, 64, bw);
            // The bound is on the long-run mean; allow 1 % for the window's random hop
            // distances.
            assert!(share <= 1.01, "N = {nodes} {bw:?}: {share} of the bound");
            assert!(
                share >= 0.85,
                "N = {nodes} {bw:?}: only {share} of the bound"
            );
        }
    }
}

/// The bound's dependence on the send length holds too (16-byte and 256-byte sends).
#[test]
fn the_bound_scales_with_the_send_length() {
    for data_bytes in [16, 256] {
        let share = saturated(8, data_bytes, BandwidthAllocation::Sat);
        assert!(
            (0.85..=1.01).contains(&share),
            "{data_bytes} B: {share} of the bound"
        );
    }
}
