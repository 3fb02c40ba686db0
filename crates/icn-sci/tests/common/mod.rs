//! Helpers shared by the integration tests.
#![allow(dead_code)]

use icn_engine::model::NoProgress;
use icn_sci::config::{Pattern, SciConfig};
use icn_sci::protocol::Policy;
use icn_sci::ring::Sim;

/// A short run of `cfg`'s ring.
pub fn short(nodes: usize, load: f64, pattern: Pattern) -> SciConfig {
    let mut cfg = SciConfig {
        nodes,
        load,
        warmup_cycles: 5_000,
        measure_cycles: 40_000,
        ..SciConfig::default()
    };
    cfg.traffic.pattern = pattern;
    cfg
}

/// Saturated hot spot: every node at full load, half of each node's sends to node 0.
pub fn saturated_hotspot(policy: Policy) -> SciConfig {
    let mut cfg = short(8, 1.0, Pattern::Hotspot);
    cfg.receiver = policy;
    cfg.bandwidth_allocation = if std::env::var("BW").is_ok() {
        icn_sci::config::BandwidthAllocation::None
    } else {
        icn_sci::config::BandwidthAllocation::Sat
    };
    cfg.traffic.hotspot_fraction = 1.0;
    cfg.measure_cycles = 100_000;
    cfg
}

pub fn run(cfg: &SciConfig, seed: u64, intelligent: bool) -> Sim {
    icn_sci::simulate(cfg, seed, intelligent, &NoProgress).expect("run")
}

pub fn run_logged(cfg: &SciConfig, seed: u64, intelligent: bool) -> Sim {
    let mut sim = Sim::new(cfg, seed, intelligent).expect("valid config");
    sim.enable_log();
    sim.run(&NoProgress).expect("run");
    sim
}
