//! The SCI ring reads the one `traffic.pattern` type and draws only what a ring has:
//! `neighbour` (its earlier name) and BookSim2's `neighbor` are both the downstream node; the
//! patterns of grids and networks are refused naming the key.

use icn_sci::config::{SciConfig, TrafficPattern};

fn with(pattern: TrafficPattern) -> SciConfig {
    let mut cfg = SciConfig::default();
    cfg.traffic.pattern = pattern;
    cfg
}

#[test]
fn the_ring_refuses_the_patterns_it_does_not_draw() {
    for p in [
        TrafficPattern::Uniform,
        TrafficPattern::Hotspot,
        TrafficPattern::NeighborX,
        TrafficPattern::Neighbor,
    ] {
        with(p).validate().unwrap_or_else(|e| panic!("{p:?}: {e}"));
    }
    for p in [TrafficPattern::Tornado, TrafficPattern::RandomPermutation] {
        let e = with(p).validate().unwrap_err();
        assert_eq!(e.key, "traffic.pattern");
        assert!(
            e.message.contains("neighbor_x (or neighbour)"),
            "{}",
            e.message
        );
    }
}
